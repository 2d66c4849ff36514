package main

import (
	"errors"
	"fmt"
	"sync"
)

// The request parser: decode is called once a request, parseField once
// a field and parseNumber once a number, the hot functions.

type field struct {
	name string
	val  uint64
}

type request struct {
	op     byte // 'P': put the sum of the fields under key; 'A': add it
	key    string
	fields []field
}

// decode parses one request line: an operation and a key, then
// name=n,n,... fields.
func decode(line []byte, req *request) error {
	req.fields = req.fields[:0]
	if len(line) < 2 || line[1] != ' ' {
		return errors.New("no operation")
	}
	req.op = line[0]
	i := skipSpace(line, 2)
	k, i := token(line, i)
	req.key = string(k)
	for i < len(line) {
		i = skipSpace(line, i)
		if i >= len(line) {
			break
		}
		var t []byte
		t, i = token(line, i)
		f, err := parseField(t)
		if err != nil {
			return err
		}
		req.fields = append(req.fields, f)
	}
	return nil
}

func token(b []byte, i int) ([]byte, int) {
	j := i
	for j < len(b) && b[j] != ' ' && b[j] != '\n' {
		j++
	}
	return b[i:j], j
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n') {
		i++
	}
	return i
}

// parseField splits name=n,n,... into the field's name and the sum of
// its numbers.
func parseField(t []byte) (field, error) {
	eq := -1
	for i, c := range t {
		if c == '=' {
			eq = i
			break
		}
		if c < '0' || c > 'z' {
			return field{}, fmt.Errorf("bad name byte %q in %q", c, t)
		}
	}
	if eq <= 0 {
		return field{}, fmt.Errorf("no name= in %q", t)
	}
	f := field{name: intern(t[:eq])}
	rest := t[eq+1:]
	for len(rest) > 0 {
		n, used, err := parseNumber(rest)
		if err != nil {
			return field{}, err
		}
		f.val += n
		rest = rest[used:]
		if len(rest) > 0 && rest[0] == ',' {
			rest = rest[1:]
		}
	}
	return f, nil
}

// parseNumber reads one decimal number, with an optional sign, at the
// start of b and returns it and the bytes it used.
func parseNumber(b []byte) (uint64, int, error) {
	i, neg := 0, false
	if i < len(b) && (b[i] == '-' || b[i] == '+') {
		neg = b[i] == '-'
		i++
	}
	n := uint64(0)
	start := i
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		if n > (1<<63)/10 {
			return 0, 0, fmt.Errorf("number too large in %q", b)
		}
		n = n*10 + uint64(b[i]-'0')
	}
	if i == start {
		return 0, 0, fmt.Errorf("no number in %q", b)
	}
	if neg {
		n = -n
	}
	return n, i, nil
}

var names sync.Map

func intern(b []byte) string {
	if s, ok := names.Load(string(b)); ok {
		return s.(string)
	}
	s := string(b)
	names.Store(s, s)
	return s
}
