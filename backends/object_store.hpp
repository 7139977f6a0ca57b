#pragma once

// What an object-store backend offers beside plans: the primitives a checkpoint store needs where
// there are no directories, renames or locks (the manifest and `latest` as small objects, one
// listing of a case's checkpoints, batched retirement, clean-up after a failed write). Objects are
// named by the same paths as FilePlan::path; the backend maps them to keys.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ckpt::backends {

struct StoredObject {
  std::string path;  // the listed prefix followed by the rest of the object's key
  std::uint64_t size = 0;
};

// An object-store backend (Capabilities::object_store) also implements this interface: a caller
// holding its Backend reaches it with dynamic_cast<ObjectStore*>. Used by one thread at a time;
// every call throws IoError with the object's name and the store's answer when a
// request fails after its retries.
class ObjectStore {
 public:
  virtual ~ObjectStore() = default;

  // The whole object at `path`, or nullopt when there is none.
  virtual std::optional<std::string> get(const std::string& path) = 0;
  // Bytes [offset, offset + length) of the object at `path` (a ranged GET), fewer where it ends
  // sooner; nullopt when there is none. `length` > 0.
  virtual std::optional<std::string> get_range(const std::string& path, std::uint64_t offset,
                                               std::uint64_t length) = 0;
  // Writes `path` whole; another process sees all of it or nothing (an object store's PUT).
  virtual void put(const std::string& path, std::string_view bytes) = 0;
  // Writes `path` only when no object is there (a conditional PUT: If-None-Match: *), atomically
  // against other writers; false when there is one, or another conditional write of it is under
  // way. What a lock without a lock service is made of.
  virtual bool create(const std::string& path, std::string_view bytes) = 0;
  // Every object whose path starts with `prefix` (a folder ends in '/'), in key order.
  virtual std::vector<StoredObject> list(const std::string& prefix) = 0;
  // Deletes the objects at `paths`, many per request; paths without an object are no error.
  virtual void remove(const std::vector<std::string>& paths) = 0;
  // Aborts the unfinished multipart uploads under `prefix` (a killed writer's: their parts stay
  // stored, and billed, until then). Returns how many.
  virtual std::size_t abort_uploads(const std::string& prefix) = 0;
  // Requests these calls made since the last call, by kind (as Backend::counters()); resets them.
  virtual std::map<std::string, std::uint64_t> take_counters() = 0;
};

}  // namespace ckpt::backends
