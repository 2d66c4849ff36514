//go:build !unix

package fdr

import "os"

func mapFile(path string) ([]byte, func(int), func(), error) {
	data, err := os.ReadFile(path)
	return data, func(int) {}, func() {}, err
}
