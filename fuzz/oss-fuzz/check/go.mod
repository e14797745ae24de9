module github.com/nodeproof/nodeproof/fuzz/oss-fuzz/check

go 1.26.0

require (
	github.com/AdamKorcz/go-118-fuzz-build v0.0.0-20250520111509-a70c2aa677fa
	github.com/nodeproof/nodeproof v0.0.0
	github.com/stretchr/testify v1.11.1
)

require (
	github.com/AdaLogics/go-fuzz-headers v0.0.0-20230811130428-ced1acdcaa24 // indirect
	github.com/davecgh/go-spew v1.1.2-0.20180830191138-d8f796af33cc // indirect
	github.com/pmezard/go-difflib v1.0.1-0.20181226105442-5d4384ee4fb2 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)

replace github.com/nodeproof/nodeproof => ../../..
