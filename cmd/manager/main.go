package main

import (
	_ "github.com/google/go-cmp/cmp"
	_ "github.com/google/uuid"
	_ "github.com/onsi/ginkgo/v2"
	_ "github.com/onsi/gomega"
	_ "k8s.io/utils/clock"
	_ "sigs.k8s.io/controller-runtime"
	_ "github.com/prometheus/client_golang/prometheus"
)

func main() {}
