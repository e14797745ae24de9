module github.com/nodeproof/nodeproof

go 1.26

require (
	github.com/davecgh/go-spew v1.1.2-0.20180830191138-d8f796af33cc // indirect
	k8s.io/kubelet v0.36.3 // indirect
	pgregory.net/rapid v1.3.0 // indirect
)
