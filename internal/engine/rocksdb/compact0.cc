//go:build rocksdb

// compact0.cc is db_bench's compact0 for in-process RocksDB: the C API of
// RocksDB 7.8 has no CompactFiles, so this calls the C++ API on the database
// behind the C API's handle.

#include <climits>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "rocksdb/db.h"
#include "rocksdb/metadata.h"
#include "rocksdb/options.h"

// rocksdb_t as the C API defines it (db/c.cc): a wrapper around the C++
// database. Its layout, one pointer, has not changed since the C API began.
struct rocksdb_t {
  rocksdb::DB* rep;
};

extern "C" {
#include "compact0.h"
}

char* bl_compact0(uintptr_t handle, int* files, int* to_level) {
  rocksdb::DB* db = reinterpret_cast<rocksdb_t*>(handle)->rep;
  std::vector<rocksdb::LiveFileMetaData> live;
  db->GetLiveFilesMetaData(&live);
  // The files of L0 go to the first level below it that holds data (with
  // dynamic level sizes that need not be L1); with no such level, or no L0
  // files, there is nothing to do.
  std::vector<std::string> names;
  int next = INT_MAX;
  for (const auto& f : live) {
    if (f.level == 0) {
      names.push_back(f.name);
    } else if (f.level < next) {
      next = f.level;
    }
  }
  *files = 0;
  *to_level = next == INT_MAX ? -1 : next;
  if (names.empty() || next == INT_MAX) return nullptr;
  rocksdb::CompactionOptions co;
  // The output level's configured compression, and files of the configured
  // size, as db_bench's compact0 asks.
  co.compression = rocksdb::kDisableCompressionOption;
  co.output_file_size_limit = db->GetOptions().target_file_size_base;
  rocksdb::Status s = db->CompactFiles(co, names, next);
  if (!s.ok()) return strdup(s.ToString().c_str());
  *files = static_cast<int>(names.size());
  return nullptr;
}
