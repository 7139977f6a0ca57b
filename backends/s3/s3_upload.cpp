// The write side of S3Backend: single PUTs, multipart uploads (create, parts, complete) and the
// abort of an upload that did not complete.
#include <stdexcept>

#include "backends/s3/s3_backend.hpp"
#include "backends/s3/s3_extents.hpp"
#include "backends/s3/s3_objects.hpp"
#include "backends/s3/s3_xml.hpp"

namespace ckpt::backends::s3 {
namespace {

std::string upload_query(const std::string& upload_id) {
  return canonical_query({{"uploadId", upload_id}});
}

std::string part_query(const std::string& upload_id, std::size_t part) {
  return canonical_query({{"partNumber", std::to_string(part + 1)}, {"uploadId", upload_id}});
}

std::string completion_body(const ObjectState& object) {
  std::string xml = "<CompleteMultipartUpload>";
  for (std::size_t k = 0; k < object.etags.size(); ++k) {
    xml += "<Part><PartNumber>" + std::to_string(k + 1) + "</PartNumber><ETag>" + object.etags[k] +
           "</ETag></Part>";
  }
  return xml + "</CompleteMultipartUpload>";
}

}  // namespace

// Which object (and part, or none for a PUT) a request of an upload is for.
struct S3Backend::Target {
  std::size_t object = 0;
  std::optional<std::size_t> part;
};

std::string S3Backend::create_upload(const std::string& key) {
  const Request create{.kind = RequestKind::multipart,
                       .method = "POST",
                       .url = addressing_.object_url(key, canonical_query({{"uploads", ""}})),
                       .name = addressing_.name(key)};
  const std::vector<Response> responses = send_all({create});
  const std::string id = xml_value(responses[0].text, "UploadId");
  if (id.empty()) {
    throw IoError("s3: POST " + create.name + " (create multipart upload): no UploadId in the " +
                  "answer: " + responses[0].text.substr(0, 200));
  }
  return id;
}

// Uploads the objects whose extents `plan` hands over: whole objects only (a streamed write
// must hand each object over in one part of the stream).
void S3Backend::upload(Objects& objects, const IoPlan& plan, MemoryView memory) {
  std::vector<Request> requests;
  std::vector<Target> targets;
  for (std::size_t i = 0; i < plan.files.size(); ++i) {
    const FilePlan& file = plan.files[i];
    ObjectState& object = objects.objects[i];
    std::uint64_t bytes = 0;
    for (const Extent& e : file.extents) bytes += e.length;
    if (bytes == 0) continue;
    if (bytes != object.data_bytes || object.sent) {
      throw IoError("s3: write " + file.path +
                    ": an object is uploaded whole, so a streamed "
                    "write must hand over all of a file's extents at once (" +
                    std::to_string(bytes) + " of " + std::to_string(object.data_bytes) + " bytes)");
    }
    const std::vector<Segment> bytes_of = object_segments(file, memory, object.size);
    const std::string name = addressing_.name(object.key);
    if (object.size <= config_.part_size) {
      requests.push_back(Request{.kind = RequestKind::put,
                                 .method = "PUT",
                                 .url = addressing_.object_url(object.key),
                                 .name = name,
                                 .upload = bytes_of});
      targets.push_back(Target{i, std::nullopt});
      continue;
    }
    object.upload_id = create_upload(object.key);
    const std::size_t parts = (object.size + config_.part_size - 1) / config_.part_size;
    object.etags.assign(parts, "");
    for (std::size_t k = 0; k < parts; ++k) {
      const std::uint64_t begin = k * config_.part_size;
      const std::uint64_t end = std::min(object.size, begin + config_.part_size);
      requests.push_back(
          Request{.kind = RequestKind::part,
                  .method = "PUT",
                  .url = addressing_.object_url(object.key, part_query(object.upload_id, k)),
                  .name = name + " part " + std::to_string(k + 1),
                  .upload = slice(bytes_of, begin, end)});
      targets.push_back(Target{i, k});
    }
  }
  const std::vector<Response> responses = send_all(requests);
  for (std::size_t k = 0; k < targets.size(); ++k) {
    ObjectState& object = objects.objects[targets[k].object];
    object.sent = true;
    if (targets[k].part) {
      object.etags[*targets[k].part] = responses[k].etag;
    } else {
      object.complete = true;
    }
  }
}

// Objects without data (no extents) are written now, as zeros; then every multipart upload is
// completed.
void S3Backend::complete_uploads(Objects& objects) {
  std::vector<Request> requests;
  std::vector<std::size_t> which;
  for (std::size_t i = 0; i < objects.objects.size(); ++i) {
    ObjectState& object = objects.objects[i];
    const std::string name = addressing_.name(object.key);
    if (!object.sent && object.data_bytes > 0) {
      throw IoError("s3: write " + name + ": its extents were never handed over");
    }
    if (!object.sent) {
      requests.push_back(Request{.kind = RequestKind::put,
                                 .method = "PUT",
                                 .url = addressing_.object_url(object.key),
                                 .name = name,
                                 .upload = {Segment{nullptr, object.size}}});
    } else if (!object.complete) {
      requests.push_back(
          Request{.kind = RequestKind::multipart,
                  .method = "POST",
                  .url = addressing_.object_url(object.key, upload_query(object.upload_id)),
                  .name = name + " (complete multipart upload)",
                  .body = completion_body(object)});
    } else {
      continue;
    }
    which.push_back(i);
  }
  send_all(requests);
  for (const std::size_t i : which) {
    objects.objects[i].sent = true;
    objects.objects[i].complete = true;
  }
}

// Best effort: an upload left open keeps its parts stored (and billed) until aborted.
void S3Backend::abort_open_uploads(Objects& objects) noexcept {
  for (ObjectState& object : objects.objects) {
    if (object.upload_id.empty() || object.complete) continue;
    try {
      const Request abort{.kind = RequestKind::multipart,
                          .method = "DELETE",
                          .url = addressing_.object_url(object.key, upload_query(object.upload_id)),
                          .name = addressing_.name(object.key) + " (abort multipart upload)"};
      route(connection(0), abort, counters_);
    } catch (...) {
    }
    object.upload_id.clear();
  }
}

}  // namespace ckpt::backends::s3
