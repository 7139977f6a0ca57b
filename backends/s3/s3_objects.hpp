#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "backends/s3/s3_backend.hpp"

namespace ckpt::backends::s3 {

// One file of the plan as an object, and how far its upload has come.
struct ObjectState {
  std::string key;
  std::uint64_t size = 0;          // object_size(file)
  std::uint64_t data_bytes = 0;    // bytes the plan's extents hold
  std::string upload_id;           // of its multipart upload, once created
  std::vector<std::string> etags;  // of its parts, by part number - 1
  bool sent = false;               // PUT done, or every part uploaded
  bool complete = false;           // visible: PUT done, or multipart upload completed
};

// The objects of one write or read; on destruction after a failed write, the multipart uploads
// it created and did not complete are aborted.
class S3Backend::Objects final : public Backend::OpenFiles {
 public:
  Objects(S3Backend& backend, Direction direction) : backend_(backend), direction_(direction) {}
  ~Objects() override {
    if (direction_ == Direction::write) backend_.abort_open_uploads(*this);
  }
  Objects(const Objects&) = delete;
  Objects& operator=(const Objects&) = delete;

  std::vector<ObjectState> objects;

 private:
  S3Backend& backend_;
  Direction direction_;
};

}  // namespace ckpt::backends::s3
