// Package authtest runs the history API's real authentication path (TokenReview and
// SubjectAccessReview judged by a kube-apiserver from envtest) as a Ginkgo suite.
package authtest

import (
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/agent-sessions/agent-session-operator/internal/testenv"
)

// Shared timeouts of this suite.
const (
	timeout  = 30 * time.Second
	interval = 100 * time.Millisecond
)

var (
	testEnv *envtest.Environment
	cfg     *rest.Config
)

func TestAuth(t *testing.T) {
	testenv.RequireControlPlane(t)
	RegisterFailHandler(Fail)
	RunSpecs(t, "transcript auth suite")
}

var _ = BeforeSuite(func() {
	testEnv = &envtest.Environment{CRDDirectoryPaths: []string{filepath.Join("..", "..", "..", "config", "crd", "bases")}, ErrorIfCRDPathMissing: true}
	var err error
	cfg, err = testEnv.Start()
	Expect(err).NotTo(HaveOccurred())
	Expect(cfg).NotTo(BeNil())
})

var _ = AfterSuite(func() {
	if testEnv != nil {
		Expect(testEnv.Stop()).To(Succeed())
	}
})
