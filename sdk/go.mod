// The trainjobs SDK for Go (go/trainjobs), generated from schema/provider.schema.json by
// `make sdk`; this file is not generated. Programs require trainjobs.dev/sdk and, in a
// clone, replace it with this folder.
module trainjobs.dev/sdk

go 1.26.0

require github.com/pulumi/pulumi/sdk/v3 v3.274.1
