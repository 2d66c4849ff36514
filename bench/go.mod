module github.com/goxray/xray/bench

go 1.26.0

require github.com/goxray/xray v0.0.0

require (
	golang.org/x/exp v0.0.0-20261113113407-e3970619a1a4 // indirect
	golang.org/x/sys v0.49.0 // indirect
)

replace github.com/goxray/xray => ../
