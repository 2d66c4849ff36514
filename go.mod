module github.com/goxray/xray

go 1.26.0

require (
	github.com/google/pprof v0.0.0-20261016150608-1facf8f91b50
	github.com/klauspost/cpuid/v2 v2.4.2
	golang.org/x/sys v0.49.0
)

require google.golang.org/protobuf v1.36.12

require golang.org/x/exp v0.0.0-20261113113407-e3970619a1a4
