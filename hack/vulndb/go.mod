module github.com/ctrlkit/ctrlkit/hack/vulndb

go 1.26.0
