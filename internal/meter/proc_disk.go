package meter

import (
	"fmt"
	"os"
	"syscall"
)

// devNumbers splits a Linux dev_t into major and minor (the kernel's
// new_encode_dev layout, as glibc's gnu_dev_major/minor decode it).
func devNumbers(dev uint64) (major, minor uint32) {
	major = uint32((dev>>8)&0xfff) | uint32((dev>>32)&^uint64(0xfff))
	minor = uint32(dev&0xff) | uint32((dev>>12)&^uint64(0xff))
	return major, minor
}

// blockDevice is one line of /proc/diskstats.
type blockDevice struct {
	name         string
	major, minor uint32
}

// findBlockDevice finds the entry of /proc/diskstats for the device holding
// dir by its st_dev. Directories on file systems without a block device of
// their own (tmpfs, overlay, btrfs subvolumes with anonymous device numbers)
// are not found, and their device counters are then not readable.
func findBlockDevice(dir string) (blockDevice, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(dir, &st); err != nil {
		return blockDevice{}, fmt.Errorf("stat %s: %w", dir, err)
	}
	major, minor := devNumbers(uint64(st.Dev))
	b, err := os.ReadFile("/proc/diskstats")
	if err != nil {
		return blockDevice{}, err
	}
	name, _, ok := ParseDiskstats(b, major, minor)
	if !ok {
		return blockDevice{}, fmt.Errorf("device %d:%d of %s is not in /proc/diskstats", major, minor, dir)
	}
	return blockDevice{name, major, minor}, nil
}

func (d blockDevice) read() (DiskCounters, bool) {
	b, err := os.ReadFile("/proc/diskstats")
	if err != nil {
		return DiskCounters{}, false
	}
	_, c, ok := ParseDiskstats(b, d.major, d.minor)
	return c, ok
}
