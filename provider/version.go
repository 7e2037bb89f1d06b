package main

// Version is the package's version: the plugin reports it and the schema carries it. A release
// would tag the repository v<Version> (docs/package.md, "Versions").
const Version = "0.1.0"

// Name is the package's name: the plugin is pulumi-resource-<Name>, its types <Name>:index:*.
const Name = "warmpool"
