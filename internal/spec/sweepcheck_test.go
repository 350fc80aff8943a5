package spec

import "testing"

func TestCheckSetting(t *testing.T) {
	read := map[string]string{"innodb_io_capacity": "100", "innodb_buffer_pool_size": "134217728",
		"shared_buffers": "128MB", "synchronous_commit": "off", "checkpoint_timeout": "5min", "journal_mode": "wal",
		"innodb_flush_log_at_trx_commit": "2", "fsync": "on", "innodb_flush_method": "O_DIRECT"}
	for _, c := range []struct {
		setting, asked string
		want           SettingOutcome
	}{
		{"innodb_io_capacity", "100", SettingTook},
		{"innodb_io_capacity", "50", SettingDiffers}, // MariaDB clamps to its least, 100
		{"innodb-io-capacity", "100", SettingTook},
		{"innodb_buffer_pool_instances", "4", SettingUnknown}, // removed in MariaDB 10.11
		{"innodb_buffer_pool_size", "128M", SettingTook},
		{"innodb_buffer_pool_size", "256M", SettingDiffers},
		{"shared_buffers", "131072kB", SettingTook},
		{"shared_buffers", "1GB", SettingDiffers},
		{"shared_buffers", "16384", SettingTook}, // 8 kB pages: a bare number cannot be told
		{"synchronous_commit", "OFF", SettingTook},
		{"synchronous_commit", "on", SettingDiffers},
		{"checkpoint_timeout", "300s", SettingTook},
		{"checkpoint_timeout", "15min", SettingDiffers},
		{"journal_mode", "WAL", SettingTook},
		{"journal_mode", "delete", SettingDiffers},
		{"fsync", "1", SettingTook},
		{"fsync", "false", SettingDiffers},
		{"innodb_flush_method", "fsync", SettingDiffers},
		{"innodb_flush_log_at_trx_commit", "2", SettingTook},
	} {
		got := CheckSetting(c.setting, c.asked, read)
		if got.Outcome != c.want {
			t.Errorf("%s = %s against %v: outcome %d (%s), want %d", c.setting, c.asked, got.Read, got.Outcome, got, c.want)
		}
	}
}
