//go:build purego

package asm

const purego = true
