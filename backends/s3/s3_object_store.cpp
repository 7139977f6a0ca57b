// S3Backend as an ObjectStore: whole small objects, listings, batched deletes and the abort of
// multipart uploads that a killed writer left open.
#include <algorithm>
#include <stdexcept>

#include "backends/s3/s3_backend.hpp"
#include "backends/s3/s3_checksum.hpp"
#include "backends/s3/s3_xml.hpp"

namespace ckpt::backends::s3 {
namespace {

// DeleteObjects takes at most this many keys; a listing page holds at most as many.
constexpr std::size_t kBatch = 1000;

std::string delete_body(const std::vector<std::string>& keys) {
  std::string xml = "<Delete><Quiet>true</Quiet>";
  for (const std::string& key : keys) xml += "<Object><Key>" + xml_escape(key) + "</Key></Object>";
  return xml + "</Delete>";
}

}  // namespace

std::string S3Backend::key_of(const std::string& path) const {
  try {
    return object_key(config_.prefix, path);
  } catch (const std::invalid_argument& e) {
    throw IoError(e.what());
  }
}

Response S3Backend::store_request(const Request& request, bool missing_ok) {
  Response response = route(connection(0), request, store_counters_);
  const bool missing = missing_ok && response.status == 404;
  if (!response.ok() && !missing) throw IoError("s3: " + describe_failure(request, response));
  return response;
}

std::string S3Backend::list_page(const Query& query, const std::string& what) {
  return store_request({.kind = RequestKind::list,
                        .url = addressing_.bucket_url(canonical_query(query)),
                        .name = what})
      .text;
}

std::optional<std::string> S3Backend::get(const std::string& path) {
  const std::string key = key_of(path);
  Response r = store_request(
      {.kind = RequestKind::get, .url = addressing_.object_url(key), .name = addressing_.name(key)},
      true);
  if (r.status == 404) return std::nullopt;
  return std::move(r.text);
}

// A range that starts at or past the object's end is answered 416: no bytes there.
std::optional<std::string> S3Backend::get_range(const std::string& path, std::uint64_t offset,
                                                std::uint64_t length) {
  const std::string key = key_of(path);
  const Request request{.kind = RequestKind::ranged_get,
                        .url = addressing_.object_url(key),
                        .name = addressing_.name(key),
                        .range = {{offset, offset + length - 1}}};
  Response r = route(connection(0), request, store_counters_);
  if (r.status == 404) return std::nullopt;
  if (r.status == 416) return std::string();
  if (!r.ok()) throw IoError("s3: " + describe_failure(request, r));
  // A whole object (200) could be far larger than the range: never taken for it.
  if (r.status != 206) {
    throw IoError("s3: GET " + request.name + " bytes " + std::to_string(offset) + "-: HTTP " +
                  std::to_string(r.status) +
                  " instead of 206: the server ignored the Range header");
  }
  r.text.resize(std::min<std::size_t>(r.text.size(), length));
  return std::move(r.text);
}

void S3Backend::put(const std::string& path, std::string_view bytes) {
  const std::string key = key_of(path);
  store_request(
      {.kind = RequestKind::put,
       .method = "PUT",
       .url = addressing_.object_url(key),
       .name = addressing_.name(key),
       .upload = {Segment{reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()}}});
}

// S3 answers 412 PreconditionFailed when the object exists, and 409 ConditionalRequestConflict
// while another conditional write of the key is under way: either way another writer has it.
bool S3Backend::create(const std::string& path, std::string_view bytes) {
  const std::string key = key_of(path);
  const Request request{
      .kind = RequestKind::put,
      .method = "PUT",
      .url = addressing_.object_url(key),
      .name = addressing_.name(key),
      .upload = {Segment{reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()}},
      .headers = {"If-None-Match: *"}};
  Response r = route(connection(0), request, store_counters_);
  if (r.status == 412 || r.status == 409) return false;
  if (!r.ok()) throw IoError("s3: " + describe_failure(request, r));
  return true;
}

std::vector<StoredObject> S3Backend::list(const std::string& prefix) {
  const std::string key_prefix = key_of(prefix);
  std::vector<StoredObject> objects;
  std::string token;
  do {
    Query query{{"list-type", "2"}, {"prefix", key_prefix}};
    if (!token.empty()) query.emplace_back("continuation-token", token);
    const std::string page = list_page(query, addressing_.name(key_prefix) + " (list)");
    for (const std::string& entry : xml_elements(page, "Contents")) {
      const std::string key = xml_value(entry, "Key");
      if (!key.starts_with(key_prefix)) continue;
      objects.push_back(
          {prefix + key.substr(key_prefix.size()), std::stoull("0" + xml_value(entry, "Size"))});
    }
    token =
        xml_value(page, "IsTruncated") == "true" ? xml_value(page, "NextContinuationToken") : "";
  } while (!token.empty());
  return objects;
}

void S3Backend::remove(const std::vector<std::string>& paths) {
  for (std::size_t first = 0; first < paths.size(); first += kBatch) {
    std::vector<std::string> keys;
    for (std::size_t i = first; i < std::min(paths.size(), first + kBatch); ++i)
      keys.push_back(key_of(paths[i]));
    const std::string body = delete_body(keys);
    const Response r =
        store_request({.kind = RequestKind::del,
                       .method = "POST",
                       .url = addressing_.bucket_url(canonical_query({{"delete", ""}})),
                       .name = addressing_.name(keys.front()) + " and " +
                               std::to_string(keys.size() - 1) + " more (delete)",
                       .headers = {"x-amz-sdk-checksum-algorithm: CRC32",
                                   "x-amz-checksum-crc32: " + crc32_base64(body)},
                       .body = body});
    // Quiet mode lists only the keys it could not delete.
    if (const std::vector<std::string> errors = xml_elements(r.text, "Error"); !errors.empty()) {
      throw IoError("s3: delete " + addressing_.name(xml_value(errors.front(), "Key")) + ": " +
                    xml_value(errors.front(), "Code") + ": " +
                    xml_value(errors.front(), "Message") + " (" + std::to_string(errors.size()) +
                    " of " + std::to_string(keys.size()) + " keys not deleted)");
    }
  }
}

std::size_t S3Backend::abort_uploads(const std::string& prefix) {
  const std::string key_prefix = key_of(prefix);
  std::size_t aborted = 0;
  std::string key_marker, id_marker;
  do {
    Query query{{"prefix", key_prefix}, {"uploads", ""}};
    if (!key_marker.empty()) query.emplace_back("key-marker", key_marker);
    if (!id_marker.empty()) query.emplace_back("upload-id-marker", id_marker);
    const std::string page = list_page(query, addressing_.name(key_prefix) + " (list uploads)");
    for (const std::string& upload : xml_elements(page, "Upload")) {
      const std::string key = xml_value(upload, "Key");
      store_request({.kind = RequestKind::multipart,
                     .method = "DELETE",
                     .url = addressing_.object_url(
                         key, canonical_query({{"uploadId", xml_value(upload, "UploadId")}})),
                     .name = addressing_.name(key) + " (abort multipart upload)"},
                    true);
      ++aborted;
    }
    const bool more = xml_value(page, "IsTruncated") == "true";
    key_marker = more ? xml_value(page, "NextKeyMarker") : "";
    id_marker = more ? xml_value(page, "NextUploadIdMarker") : "";
  } while (!key_marker.empty());
  return aborted;
}

std::map<std::string, std::uint64_t> S3Backend::take_counters() {
  std::map<std::string, std::uint64_t> counts = store_counters_.snapshot();
  store_counters_.reset();
  return counts;
}

}  // namespace ckpt::backends::s3
