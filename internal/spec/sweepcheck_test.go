package spec

import "testing"

func TestCheckSetting(t *testing.T) {
	read := map[string]string{"innodb_io_capacity": "100", "innodb_buffer_pool_size": "134217728",
		"shared_buffers": "128MB", "synchronous_commit": "off", "checkpoint_timeout": "5min", "journal_mode": "wal",
		"innodb_flush_log_at_trx_commit": "2", "fsync": "on", "innodb_flush_method": "O_DIRECT",
		"work_mem": "4MB", "max_wal_size": "1GB", "wal_writer_delay": "200ms"}
	// pg_settings.unit: a bare number is in these; MariaDB gives none.
	units := map[string]string{"shared_buffers": "8kB", "work_mem": "kB", "max_wal_size": "MB",
		"checkpoint_timeout": "s", "wal_writer_delay": "ms"}
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
		{"shared_buffers", "16384", SettingTook}, // 8 kB pages: 128MB
		{"shared_buffers", "16385", SettingDiffers},
		{"work_mem", "4096", SettingTook},        // kB: 4MB
		{"work_mem", "4", SettingDiffers},        // 4 kB, not 4MB
		{"max_wal_size", "1024", SettingTook},    // MB: 1GB
		{"max_wal_size", "2048", SettingDiffers}, // 2GB
		{"checkpoint_timeout", "300", SettingTook},
		{"checkpoint_timeout", "30", SettingDiffers},
		{"wal_writer_delay", "200", SettingTook}, // ms
		{"wal_writer_delay", "10", SettingDiffers},
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
		got := CheckSetting(c.setting, c.asked, read, units)
		if got.Outcome != c.want {
			t.Errorf("%s = %s against %v: outcome %d (%s), want %d", c.setting, c.asked, got.Read, got.Outcome, got, c.want)
		}
	}
	// Without the unit (a stored manifest from before units were kept), a
	// bare number against a size cannot be told apart: not flagged.
	if got := CheckSetting("shared_buffers", "16385", read, nil); got.Outcome != SettingTook {
		t.Errorf("shared_buffers = 16385 without units: %s, want taken", got)
	}
}
