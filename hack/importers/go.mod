module github.com/ctrlkit/ctrlkit/hack/importers

go 1.26.0
