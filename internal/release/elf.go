package release

import (
	"bytes"
	"encoding/binary"
	"errors"
	"runtime/debug"
)

// Inspect needs two facts of an executable: the machine its ELF header
// names and the Go build info the linker wrote into it. debug/elf and
// debug/buildinfo read them, and much more (sections, symbols, DWARF,
// Mach-O, PE), which put ~240 KB into the binary of the box that runs this
// check at every update; the few dozen bytes of header read here are
// enough. TestReadExecutableAgreesWithDebugPackages holds them to the
// standard library's answers on real questbox builds.

// ELF machines (e_machine) questbox is released for, and the GOARCH of
// each.
var elfArch = map[uint16]string{
	62:  "amd64",   // EM_X86_64
	183: "arm64",   // EM_AARCH64
	40:  "arm",     // EM_ARM
	3:   "386",     // EM_386
	243: "riscv64", // EM_RISCV
}

// elfFile is what readELF found: the machine, and the file's writable,
// non-executable loadable segments (where the Go linker puts its build
// info), each with the virtual address it is loaded at.
type elfFile struct {
	machine uint16
	data    []segment
}

type segment struct {
	vaddr uint64
	bytes []byte
}

// readELF reads b's ELF header and program headers (32 or 64 bits, either
// byte order); it refuses what is not ELF or does not fit in b.
func readELF(b []byte) (elfFile, error) {
	var f elfFile
	if len(b) < 52 || string(b[:4]) != "\x7fELF" {
		return f, errors.New("no ELF magic")
	}
	var bo binary.ByteOrder
	switch b[5] {
	case 1:
		bo = binary.LittleEndian
	case 2:
		bo = binary.BigEndian
	default:
		return f, errors.New("unknown ELF byte order")
	}
	f.machine = bo.Uint16(b[18:])
	var phoff, phentsize, phnum, phsize uint64
	wide := b[4] == 2 // ELFCLASS64
	switch {
	case b[4] == 1: // ELFCLASS32
		phoff, phentsize, phnum, phsize = uint64(bo.Uint32(b[28:])), uint64(bo.Uint16(b[42:])), uint64(bo.Uint16(b[44:])), 32
	case wide && len(b) >= 64:
		phoff, phentsize, phnum, phsize = bo.Uint64(b[32:]), uint64(bo.Uint16(b[54:])), uint64(bo.Uint16(b[56:])), 56
	default:
		return f, errors.New("unknown ELF class or short header")
	}
	size := uint64(len(b))
	if phnum > 0 && phentsize < phsize {
		return f, errors.New("program headers too small")
	}
	if phoff > size || phnum*phentsize > size-phoff {
		return f, errors.New("program headers beyond the end of the file")
	}
	const ptLoad, pfX, pfW = 1, 1, 2
	for i := range phnum {
		h := b[phoff+i*phentsize:]
		var typ, flags uint32
		var off, vaddr, filesz uint64
		if wide {
			typ, flags, off, vaddr, filesz = bo.Uint32(h), bo.Uint32(h[4:]), bo.Uint64(h[8:]), bo.Uint64(h[16:]), bo.Uint64(h[32:])
		} else {
			typ, off, vaddr, filesz, flags = bo.Uint32(h), uint64(bo.Uint32(h[4:])), uint64(bo.Uint32(h[8:])), uint64(bo.Uint32(h[16:])), bo.Uint32(h[24:])
		}
		if typ != ptLoad || flags&(pfX|pfW) != pfW {
			continue
		}
		if off > size || filesz > size-off {
			return f, errors.New("a segment beyond the end of the file")
		}
		f.data = append(f.data, segment{vaddr, b[off : off+filesz]})
	}
	return f, nil
}

// buildInfoMagic starts the Go linker's build info blob, which is aligned
// to 16 bytes in memory: magic, pointer size, flags, 16 bytes of padding
// or pointers, then (flags&2, since Go 1.18) the Go version and the module
// info as varint-prefixed strings.
const buildInfoMagic = "\xff Go buildinf:"

// readBuildInfo finds and parses the Go build info in f's data segments,
// as debug/buildinfo.Read does for an ELF file.
func readBuildInfo(f elfFile) (*debug.BuildInfo, error) {
	for _, s := range f.data {
		for at := 0; at < len(s.bytes); at++ {
			i := bytes.Index(s.bytes[at:], []byte(buildInfoMagic))
			if i < 0 {
				break
			}
			if at += i; (s.vaddr+uint64(at))%16 == 0 {
				return parseBuildInfo(s.bytes[at:])
			}
		}
	}
	return nil, errors.New("its magic is in no data segment")
}

// parseBuildInfo parses a build info blob that starts at b[0].
func parseBuildInfo(b []byte) (*debug.BuildInfo, error) {
	const header = 32
	if len(b) < header || b[15]&2 == 0 {
		return nil, errors.New("build info in a format older than Go 1.18")
	}
	b = b[header:]
	var strs [2]string
	for i := range strs {
		n, w := binary.Uvarint(b)
		if w <= 0 || n > uint64(len(b)-w) {
			return nil, errors.New("build info cut short")
		}
		strs[i], b = string(b[w:w+int(n)]), b[w+int(n):]
	}
	// The module info is framed by 16 bytes on each side, the last line
	// ending in a newline before the end frame.
	mod := strs[1]
	if len(mod) < 33 || mod[len(mod)-17] != '\n' {
		return nil, errors.New("build info without module info")
	}
	bi, err := debug.ParseBuildInfo(mod[16 : len(mod)-16])
	if err != nil {
		return nil, err
	}
	bi.GoVersion = strs[0]
	return bi, nil
}
