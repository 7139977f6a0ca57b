#include "harness/memory/staging.hpp"

#include <algorithm>
#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>

#include "harness/common/bounded_slots.hpp"
#include "harness/common/elapsed.hpp"

namespace ckpt::harness {
namespace {

// An extent or dataset piece of the plan: files[file], item `index`, memory [begin, end).
struct Item {
  std::size_t file = 0;
  std::size_t index = 0;
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
};

std::vector<Item> memory_order(const backends::IoPlan& plan, bool datasets) {
  std::vector<Item> items;
  for (std::size_t f = 0; f < plan.files.size(); ++f) {
    const backends::FilePlan& file = plan.files[f];
    const std::size_t n = datasets ? file.datasets.size() : file.extents.size();
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint64_t begin =
          datasets ? file.datasets[i].memory_offset : file.extents[i].memory_offset;
      const std::uint64_t bytes = datasets ? file.datasets[i].bytes() : file.extents[i].length;
      if (bytes > 0) items.push_back({f, i, begin, begin + bytes});
    }
  }
  std::sort(items.begin(), items.end(),
            [](const Item& a, const Item& b) { return a.begin < b.begin; });
  return items;
}

// Moves a chunk end that falls inside a dataset element back to that element's start.
std::uint64_t element_boundary(const backends::IoPlan& plan, const std::vector<Item>& datasets,
                               std::size_t first, std::uint64_t end) {
  for (std::size_t k = first; k < datasets.size() && datasets[k].begin < end; ++k) {
    if (datasets[k].end <= end) continue;
    const std::uint64_t element =
        plan.files[datasets[k].file].datasets[datasets[k].index].element_bytes;
    return datasets[k].begin +
           (end - datasets[k].begin) / std::max<std::uint64_t>(element, 1) * element;
  }
  return end;
}

// The part's entry for plan file `index` (parts list files in plan order).
StagedPart::File& file_of(StagedPart& part, std::size_t index) {
  auto it = std::lower_bound(part.files.begin(), part.files.end(), index,
                             [](const StagedPart::File& f, std::size_t i) { return f.index < i; });
  if (it == part.files.end() || it->index != index)
    it = part.files.insert(it, StagedPart::File{index, {}, {}});
  return *it;
}

// Items [first, ...) that start before the part's end, in (file, plan index) order.
std::vector<Item> touching(const std::vector<Item>& items, std::size_t first,
                           const StagedPart& part) {
  std::vector<Item> in;
  for (std::size_t k = first; k < items.size() && items[k].begin < part.offset + part.bytes; ++k)
    in.push_back(items[k]);
  std::sort(in.begin(), in.end(), [](const Item& a, const Item& b) {
    return std::tie(a.file, a.index) < std::tie(b.file, b.index);
  });
  return in;
}

// The extents in the part's range, clipped to it.
void add_extents(const backends::IoPlan& plan, const std::vector<Item>& items, std::size_t first,
                 StagedPart& part) {
  const std::uint64_t begin = part.offset, end = part.offset + part.bytes;
  for (const Item& it : touching(items, first, part)) {
    const backends::Extent& e = plan.files[it.file].extents[it.index];
    const std::uint64_t b = std::max(begin, it.begin), n = std::min(end, it.end) - b;
    file_of(part, it.file).extents.push_back({e.file_offset + (b - it.begin), b - begin, n});
  }
}

// The dataset pieces in the part's range, cut to the elements inside it.
void add_datasets(const backends::IoPlan& plan, const std::vector<Item>& items, std::size_t first,
                  StagedPart& part) {
  const std::uint64_t begin = part.offset, end = part.offset + part.bytes;
  for (const Item& it : touching(items, first, part)) {
    backends::DatasetPiece piece = plan.files[it.file].datasets[it.index];
    const std::uint64_t element = std::max<std::uint64_t>(piece.element_bytes, 1);
    const std::uint64_t b = std::max(begin, it.begin), e = std::min(end, it.end);
    const std::uint64_t first_element = (b - it.begin) / element,
                        last_element = (e - it.begin + element - 1) / element;
    if (last_element <= first_element) continue;
    piece.flat_end = piece.flat_begin + last_element;
    piece.flat_begin += first_element;
    piece.memory_offset = b - begin;
    file_of(part, it.file).datasets.push_back(std::move(piece));
  }
}

// Puts the part's extents and pieces into `scratch` (the plan without_ranges) and takes them out
// again: a chunk costs its own extents, not the plan's file count.
class PartView {
 public:
  PartView(backends::IoPlan& scratch, const StagedPart& part) : scratch_(scratch), part_(part) {
    for (const StagedPart::File& f : part_.files) {
      scratch_.files[f.index].extents = f.extents;
      scratch_.files[f.index].datasets = f.datasets;
    }
  }
  ~PartView() {
    for (const StagedPart::File& f : part_.files) {
      scratch_.files[f.index].extents.clear();
      scratch_.files[f.index].datasets.clear();
    }
  }
  PartView(const PartView&) = delete;
  PartView& operator=(const PartView&) = delete;
  const backends::IoPlan& plan() const { return scratch_; }

 private:
  backends::IoPlan& scratch_;
  const StagedPart& part_;
};

}  // namespace

backends::IoPlan without_ranges(const backends::IoPlan& plan) {
  backends::IoPlan part;
  part.attributes = plan.attributes;
  for (const backends::FilePlan& f : plan.files) {
    backends::FilePlan copy;
    copy.path = f.path;
    copy.file_size = f.file_size;
    copy.reserve_offset = f.reserve_offset;
    copy.shared = f.shared;
    part.files.push_back(std::move(copy));
  }
  return part;
}

std::vector<StagedPart> split_plan(const backends::IoPlan& plan, std::uint64_t chunk_bytes) {
  if (chunk_bytes < 8) throw std::invalid_argument("staging chunks must hold at least 8 bytes");
  const std::vector<Item> extents = memory_order(plan, false);
  const std::vector<Item> datasets = memory_order(plan, true);
  std::uint64_t high = 0;
  for (const Item& it : extents) high = std::max(high, it.end);
  std::vector<StagedPart> parts;
  std::size_t first = 0, first_dataset = 0;
  std::uint64_t begin = 0;
  while (true) {
    while (first < extents.size() && extents[first].end <= begin) ++first;
    if (first == extents.size()) break;
    begin = std::max(begin, extents[first].begin);  // skip memory no extent touches
    while (first_dataset < datasets.size() && datasets[first_dataset].end <= begin) ++first_dataset;
    const std::uint64_t end =
        element_boundary(plan, datasets, first_dataset, std::min(high, begin + chunk_bytes));
    if (end <= begin) throw std::logic_error("split_plan: a chunk smaller than one element");
    StagedPart part{begin, end - begin, {}};
    add_extents(plan, extents, first, part);
    add_datasets(plan, datasets, first_dataset, part);
    parts.push_back(std::move(part));
    begin = end;
  }
  return parts;
}

backends::IoPlan part_plan(const backends::IoPlan& plan, const StagedPart& part) {
  backends::IoPlan scratch = without_ranges(plan);
  const PartView view(scratch, part);
  return view.plan();  // copied before the view empties the scratch
}

PartStream::PartStream(const backends::IoPlan& plan)
    : plan_(plan), scratch_(without_ranges(plan)) {}

void PartStream::begin(backends::Backend& backend, bool write) {
  stream_ = backend.begin(plan_, write);
}

void PartStream::transfer(const StagedPart& part, backends::MemoryView memory) {
  const PartView view(scratch_, part);
  stream_->transfer(view.plan(), memory);
}

void PartStream::transfer(const backends::IoPlan& part, backends::MemoryView memory) {
  stream_->transfer(part, memory);
}

backends::IoOutcome PartStream::finish() {
  return stream_->finish();
}

Stager::Stager(std::unique_ptr<DeviceCopier> copier, bool whole)
    : copier_(std::move(copier)), whole_(whole) {
  if (!copier_ || copier_->slots() < 1)
    throw std::invalid_argument("Stager: needs a copier with at least one slot");
}

StagedOutcome Stager::write(backends::Backend& backend, const backends::IoPlan& plan,
                            std::uint64_t base) {
  return whole_ ? whole(backend, plan, base, true) : pipelined(backend, plan, base, true);
}

StagedOutcome Stager::read(backends::Backend& backend, const backends::IoPlan& plan,
                           std::uint64_t base) {
  return whole_ ? whole(backend, plan, base, false) : pipelined(backend, plan, base, false);
}

void Stager::drain(StagedOutcome& out) {
  for (int s = 0; s < copier_->slots(); ++s) {
    try {
      out.copy_seconds += copier_->wait(s);
    } catch (const std::runtime_error& e) {
      if (out.io.ok()) out.io.error = e.what();
    }
  }
}

namespace {

using PartSlots = BoundedSlots<std::size_t>;  // payload: the index of the part a slot holds

// One pipelined write or read through the copier's slots.
struct Pipeline {
  DeviceCopier& copier;
  const std::vector<StagedPart>& parts;
  std::uint64_t base;  // where the plan's memory starts in the buffer
  PartStream stream;   // made before the clock starts
  double copy_seconds = 0;

  // Moves part `index` between `slot` and the stream.
  void transfer(std::size_t index, int slot) { stream.transfer(parts[index], copier.slot(slot)); }
};

// Copies to the host run ahead into every free slot; the oldest filled slot is written, freed and
// takes the next copy: chunk i is written from slot i % n while chunks i+1 .. i+n-1 are copied.
void copy_out_and_write(backends::Backend& backend, Pipeline& p) {
  PartSlots slots(p.copier.slots());
  std::size_t next = 0;  // the next part to copy to the host
  const auto copy_ahead = [&] {
    while (next < p.parts.size()) {
      const std::optional<int> slot = slots.try_acquire();
      if (!slot) return;
      p.copier.start(*slot, p.base + p.parts[next].offset, p.parts[next].bytes, true);
      slots.fill(*slot, next++);
    }
  };
  copy_ahead();
  p.stream.begin(backend, true);
  while (p.stream.ok()) {
    const std::optional<PartSlots::Filled> filled = slots.try_take();
    if (!filled) break;
    p.copy_seconds += p.copier.wait(filled->slot);
    p.transfer(filled->payload, filled->slot);
    if (!p.stream.ok()) break;
    slots.release(filled->slot);
    copy_ahead();
  }
}

// Chunk i is read into a free slot and its copy to the device started; with none free, the oldest
// copy (chunk i - n, in slot i % n) is waited for and its slot reused.
void read_and_copy_in(backends::Backend& backend, Pipeline& p) {
  PartSlots slots(p.copier.slots());
  p.stream.begin(backend, false);
  for (std::size_t i = 0; i < p.parts.size() && p.stream.ok(); ++i) {
    std::optional<int> slot = slots.try_acquire();
    if (!slot) {
      const std::optional<PartSlots::Filled> oldest = slots.try_take();  // every slot is filled
      p.copy_seconds += p.copier.wait(oldest.value().slot);
      slots.release(oldest->slot);
      slot = slots.try_acquire();
    }
    p.transfer(i, slot.value());
    if (!p.stream.ok()) break;
    p.copier.start(*slot, p.base + p.parts[i].offset, p.parts[i].bytes, false);
    slots.fill(*slot, i);
  }
}

}  // namespace

StagedOutcome Stager::pipelined(backends::Backend& backend, const backends::IoPlan& plan,
                                std::uint64_t base, bool write) {
  const std::vector<StagedPart> parts = split_plan(plan, copier_->slot_bytes());
  Pipeline p{*copier_, parts, base, PartStream(plan)};
  StagedOutcome out;
  out.chunks = parts.size();
  const auto start = Clock::now();
  try {
    if (write) {
      copy_out_and_write(backend, p);
    } else {
      read_and_copy_in(backend, p);
    }
  } catch (const std::runtime_error& e) {
    out.io.error =
        std::string(write ? "staging device -> host: " : "staging host -> device: ") + e.what();
  }
  out.copy_seconds = p.copy_seconds;
  drain(out);
  if (p.stream.started()) {
    const std::optional<std::string> copy_error = out.io.error;
    out.io = p.stream.finish();
    if (copy_error && out.io.ok()) out.io.error = copy_error;
  }
  out.seconds = seconds_since(start);
  return out;
}

StagedOutcome Stager::whole(backends::Backend& backend, const backends::IoPlan& plan,
                            std::uint64_t base, bool write) {
  std::uint64_t span = 0;
  for (const backends::FilePlan& f : plan.files) {
    for (const backends::Extent& e : f.extents) span = std::max(span, e.memory_offset + e.length);
  }
  if (span > copier_->slot_bytes()) {
    throw std::invalid_argument("Stager: the plan's memory (" + std::to_string(span) +
                                " bytes) exceeds the " + std::to_string(copier_->slot_bytes()) +
                                "-byte staging buffer");
  }
  StagedOutcome out;
  out.chunks = 1;
  const auto start = Clock::now();
  try {
    if (write) {
      copier_->start(0, base, span, true);
      out.copy_seconds += copier_->wait(0);
      out.io = backend.write(plan, copier_->slot(0));
    } else {
      out.io = backend.read(plan, copier_->slot(0));
      if (out.io.ok()) {
        copier_->start(0, base, span, false);
        out.copy_seconds += copier_->wait(0);
      }
    }
  } catch (const std::runtime_error& e) {
    if (out.io.ok())
      out.io.error =
          std::string(write ? "staging device -> host: " : "staging host -> device: ") + e.what();
  }
  drain(out);
  out.seconds = seconds_since(start);
  return out;
}

Stager make_stager(const Buffer& buffer, const StagingSettings& settings, bool whole) {
  if (settings.buffers < 1)
    throw std::invalid_argument("memory.staging_buffers must be at least 1");
  std::unique_ptr<DeviceCopier> copier =
      whole ? buffer.copier(std::max<std::uint64_t>(buffer.size(), 1), 1)
            : buffer.copier(settings.chunk_bytes, settings.buffers);
  if (!copier)
    throw std::invalid_argument("staging: the buffer is host memory; backends address it directly");
  return Stager(std::move(copier), whole);
}

}  // namespace ckpt::harness
