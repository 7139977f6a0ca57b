#pragma once

namespace ckpt::harness {

// restore.read: exact byte ranges, or every stored item an overlap touches read whole and then
// narrowed (DCP's file reader). Its own header so that the case can hold it.
enum class ReshardRead { exact, whole_items };

}  // namespace ckpt::harness
