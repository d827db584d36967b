#include "sim/batching/kv_span_cache.hpp"

#include <algorithm>
#include <map>
#include <string>

#include "sim/engine/check.hpp"
#include "sim/engine/hash_combine.hpp"

namespace meshsim::cluster {
namespace {

// A record for a new item: one a dropped item left (`spare`), else a new one at the end.
template <class Record>
std::uint32_t reuse_or_add(std::vector<Record>& records, std::vector<std::uint32_t>& spare) {
  if (spare.empty()) {
    records.emplace_back();
    return static_cast<std::uint32_t>(records.size() - 1);
  }
  const std::uint32_t id = spare.back();
  spare.pop_back();
  return id;
}

}  // namespace

KvSpanCache::KvSpanCache(std::uint32_t blocks, std::uint32_t block_size, bool prefix_caching)
    : capacity_(blocks), block_size_(block_size), prefix_caching_(prefix_caching), free_(blocks), unused_(blocks) {
  MESHSIM_CHECK(block_size_ > 0, "a KV block holds at least one token");
}

void KvSpanCache::make_runs(const TokenStream& stream, std::uint64_t salt, std::vector<RunNode>& runs) const {
  runs.clear();
  std::uint64_t chain = 0x6b76626c6f636b73ULL;
  bool own = false;
  stream.for_each_run([&](const TokenStream::Run& run) {
    own = own || run.own();
    if (own && salt == 0) return false;
    std::uint64_t key = engine::hash_combine(engine::hash_combine(chain, run.id), run.offset << 2 | static_cast<std::uint64_t>(run.source));
    if (own) key = engine::hash_combine(key, salt);
    const auto first = static_cast<std::uint32_t>(run.begin / block_size_);
    const std::uint32_t end =
        run.end == TokenStream::kOpen ? kNone : static_cast<std::uint32_t>(run.end / block_size_);
    if (first < end) runs.push_back(RunNode{key, first, end});
    if (run.end != TokenStream::kOpen) chain = engine::hash_combine(key, run.end - run.begin);
    return true;
  });
}

std::uint32_t KvSpanCache::open(const TokenStream& stream) {
  const std::uint32_t id = reuse_or_add(tables_, spare_tables_);
  Table& table = tables_[id];
  // A salt a request has only while it stays: its own blocks are hit only by itself, and
  // not after it left and came back (as vLLM, which frees a request's blocks when it goes).
  if (prefix_caching_) make_runs(stream, ++salt_, table.runs);
  table.open = true;
  return id;
}

void KvSpanCache::close(std::uint32_t table) {
  release(table);
  tables_[table].open = false;
  spare_tables_.push_back(table);
}

static_assert(engine::FlatU64Map::kAbsent == ~0u, "node_of answers kNone for a key not registered");

std::uint32_t KvSpanCache::node_of(std::uint64_t key) const {
  return node_index_.find(key);
}

std::uint32_t KvSpanCache::span_at(const Node& node, std::uint32_t pos) const {
  const auto it = std::lower_bound(node.spans.begin(), node.spans.end(), pos,
                                   [&](std::uint32_t span, std::uint32_t p) { return spans_[span].lo < p; });
  return it != node.spans.end() && spans_[*it].lo == pos ? *it : kNone;
}

std::uint32_t KvSpanCache::walk(const std::vector<RunNode>& runs, std::uint32_t lookable, std::vector<Found>* found,
                                std::uint32_t* free) const {
  std::uint32_t pos = 0;
  for (const RunNode& run : runs) {
    const std::uint32_t limit = std::min(run.end, lookable);
    if (pos >= limit) break;
    const std::uint32_t node = node_of(run.key);
    if (node == kNone) break;
    while (pos < limit) {
      const std::uint32_t id = span_at(nodes_[node], pos);
      if (id == kNone) return pos;
      const Span& span = spans_[id];
      const std::uint32_t to = std::min(span.top, limit);
      if (found != nullptr) found->push_back(Found{id, to});
      if (free != nullptr && to > span.held) *free += to - span.held;
      pos = to;
    }
    if (pos < run.end) break;
  }
  return pos;
}

KvCache::Prefix KvSpanCache::find_prefix(std::uint32_t table, std::uint32_t lookable) {
  found_.clear();
  Prefix prefix;
  MESHSIM_CHECK(tables_[table].blocks == 0, "find_prefix: the table already holds blocks");
  if (!prefix_caching_) return prefix;
  prefix.blocks = walk(tables_[table].runs, lookable, &found_, &prefix.free);
  return prefix;
}

std::uint32_t KvSpanCache::cached_prefix_blocks(const TokenStream& stream, std::uint32_t lookable) const {
  if (!prefix_caching_) return 0;
  make_runs(stream, 0, scratch_runs_);
  return walk(scratch_runs_, lookable, nullptr, nullptr);
}

void KvSpanCache::hold(Span& span, std::uint32_t to) {
  for (Holder& holder : span.holders) {
    if (holder.to == to) {
      ++holder.count;
      return;
    }
  }
  span.holders.push_back(Holder{to, 1});
}

// One holder of [lo, to) fewer; the blocks nobody holds any more, the top of what was
// held, are freed (after whatever was freed before, from their top down).
void KvSpanCache::unhold(Span& span, std::uint32_t to) {
  auto it = std::find_if(span.holders.begin(), span.holders.end(), [&](const Holder& h) { return h.to == to; });
  MESHSIM_CHECK(it != span.holders.end(), "a table holds a span it is not recorded in");
  if (--it->count == 0) {
    *it = span.holders.back();
    span.holders.pop_back();
  }
}

void KvSpanCache::let_go(std::uint32_t id, std::uint32_t to) {
  Span& span = spans_[id];
  unhold(span, to);
  std::uint32_t held = span.lo;
  for (const Holder& holder : span.holders) held = std::max(held, holder.to);
  if (held < span.held) free_span_blocks(id, held, span.held);
}

std::uint32_t KvSpanCache::new_piece(const Piece& piece) {
  const std::uint32_t id = reuse_or_add(pieces_, spare_pieces_);
  pieces_[id] = piece;
  Piece& p = pieces_[id];
  p.older = newest_;
  p.newer = kNone;
  if (newest_ != kNone) pieces_[newest_].newer = id;
  newest_ = id;
  if (oldest_ == kNone) oldest_ = id;
  return id;
}

void KvSpanCache::unlink_piece(std::uint32_t id) {
  const Piece piece = pieces_[id];
  (piece.older != kNone ? pieces_[piece.older].newer : oldest_) = piece.newer;
  (piece.newer != kNone ? pieces_[piece.newer].older : newest_) = piece.older;
  if (piece.span != kNone) {
    Span& span = spans_[piece.span];
    (piece.above != kNone ? pieces_[piece.above].below : span.oldest) = piece.below;
    (piece.below != kNone ? pieces_[piece.below].above : span.newest) = piece.above;
  }
  spare_pieces_.push_back(id);
}

void KvSpanCache::free_unnamed(std::uint32_t blocks) {
  if (blocks == 0) return;
  free_ += blocks;
  if (newest_ != kNone && pieces_[newest_].span == kNone) {
    pieces_[newest_].hi += blocks;
    return;
  }
  new_piece(Piece{kNone, 0, blocks});
}

void KvSpanCache::free_span_blocks(std::uint32_t id, std::uint32_t lo, std::uint32_t hi) {
  free_ += hi - lo;
  Span& span = spans_[id];
  span.held = lo;
  // Freed right after the span's piece above them: one piece, reused top down all the same.
  if (newest_ != kNone && newest_ == span.newest && pieces_[newest_].lo == hi) {
    pieces_[newest_].lo = lo;
    return;
  }
  const std::uint32_t piece = new_piece(Piece{id, lo, hi, kNone, kNone, span.newest, kNone});
  (span.newest != kNone ? pieces_[span.newest].below : span.oldest) = piece;
  span.newest = piece;
}

// A hit takes the span's free blocks below `to`: the bottoms of its newest pieces.
void KvSpanCache::take_free(std::uint32_t id, std::uint32_t to) {
  Span& span = spans_[id];
  free_ -= to - span.held;
  std::uint32_t piece = span.newest;
  while (piece != kNone && pieces_[piece].lo < to) {
    const std::uint32_t above = pieces_[piece].above;
    if (pieces_[piece].hi <= to) {
      unlink_piece(piece);
    } else {
      pieces_[piece].lo = to;
    }
    piece = above;
  }
  span.held = to;
}

void KvSpanCache::take_prefix(std::uint32_t id) {
  Table& table = tables_[id];
  MESHSIM_CHECK(table.blocks == 0, "take_prefix: the table already holds blocks");
  for (const Found& found : found_) {
    if (found.to > spans_[found.span].held) take_free(found.span, found.to);
    hold(spans_[found.span], found.to);
    table.entries.push_back(Entry{found.span, spans_[found.span].lo, found.to});
  }
  table.blocks = table.registered = found_.empty() ? 0 : found_.back().to;
  found_.clear();
}

void KvSpanCache::drop_span(std::uint32_t id) {
  Span& span = spans_[id];
  Node& node = nodes_[span.node];
  if (node.spans.size() == 1) {
    node.spans.clear();
  } else {
    const auto it = std::lower_bound(node.spans.begin(), node.spans.end(), span.lo,
                                     [&](std::uint32_t s, std::uint32_t p) { return spans_[s].lo < p; });
    node.spans.erase(it);
  }
  if (node.spans.empty()) {
    node_index_.erase(node.key);
    spare_nodes_.push_back(span.node);
  }
  span.node = kNone;
  span.holders.clear();
  span.oldest = span.newest = kNone;
  spare_spans_.push_back(id);
}

void KvSpanCache::grow(std::uint32_t id, std::uint32_t blocks) {
  MESHSIM_CHECK(blocks <= free_, "grow: not enough free KV blocks");
  free_ -= blocks;
  tables_[id].blocks += blocks;
  const std::uint32_t unused = std::min(blocks, unused_);
  unused_ -= unused;
  std::uint32_t left = blocks - unused;
  // The least recently freed blocks: the tops of the oldest pieces.
  while (left > 0) {
    const std::uint32_t oldest = oldest_;
    Piece& piece = pieces_[oldest];
    const std::uint32_t taken = std::min(left, piece.hi - piece.lo);
    left -= taken;
    piece.hi -= taken;
    const std::uint32_t span = piece.span;
    if (span != kNone) {
      spans_[span].top -= taken;
      evictions_ += taken;
    }
    if (piece.lo < piece.hi) continue;
    unlink_piece(oldest);
    if (span != kNone && spans_[span].top == spans_[span].lo) drop_span(span);
  }
}

void KvSpanCache::add_entry(Table& table, std::uint32_t span, std::uint32_t from, std::uint32_t to) {
  if (span == kNone && !table.entries.empty() && table.entries.back().span == kNone) {
    table.entries.back().to = to;
    return;
  }
  table.entries.push_back(Entry{span, from, to});
}

// Registers positions [from, to) of the table, all in the node `key`: those another span
// of the node has stay unregistered here; the rest extend the table's last span when it
// ends right there in this node, else become spans of their own.
void KvSpanCache::register_in(Table& table, std::uint64_t key, std::uint32_t from, std::uint32_t to) {
  std::uint32_t node = node_of(key);
  std::size_t next = 0;  // the node's first span ending after `pos`
  if (node != kNone) {
    const auto& spans = nodes_[node].spans;
    next = static_cast<std::size_t>(
        std::lower_bound(spans.begin(), spans.end(), from,
                         [&](std::uint32_t s, std::uint32_t p) { return spans_[s].top <= p; }) -
        spans.begin());
  }
  std::uint32_t pos = from;
  while (pos < to) {
    std::uint32_t gap_end = to;
    if (node != kNone && next < nodes_[node].spans.size()) {
      const Span& other = spans_[nodes_[node].spans[next]];
      if (other.lo <= pos) {
        const std::uint32_t end = std::min(to, other.top);
        add_entry(table, kNone, pos, end);
        pos = end;
        ++next;
        continue;
      }
      gap_end = std::min(to, other.lo);
    }
    if (!table.entries.empty()) {
      Entry& last = table.entries.back();
      if (last.span != kNone && last.to == pos && spans_[last.span].node == node && spans_[last.span].top == pos) {
        Span& span = spans_[last.span];
        unhold(span, pos);
        hold(span, gap_end);
        span.top = span.held = last.to = gap_end;
        pos = gap_end;
        continue;
      }
    }
    if (node == kNone) {
      node = reuse_or_add(nodes_, spare_nodes_);
      nodes_[node].key = key;
      node_index_.insert(key, node);
    }
    const std::uint32_t id = reuse_or_add(spans_, spare_spans_);
    Span& span = spans_[id];
    span.node = node;
    span.lo = pos;
    span.top = span.held = gap_end;
    span.holders.push_back(Holder{gap_end, 1});
    auto& spans = nodes_[node].spans;
    spans.insert(spans.begin() + static_cast<std::ptrdiff_t>(next), id);
    ++next;
    table.entries.push_back(Entry{id, pos, gap_end});
    pos = gap_end;
  }
}

void KvSpanCache::register_full(std::uint32_t id, std::uint32_t full_blocks) {
  if (!prefix_caching_) return;
  Table& table = tables_[id];
  MESHSIM_CHECK(full_blocks <= table.blocks, "register_full: more blocks than the table holds");
  while (table.registered < full_blocks) {
    while (table.runs[table.run].end <= table.registered) ++table.run;
    const RunNode& run = table.runs[table.run];
    const std::uint32_t to = std::min(full_blocks, run.end);
    register_in(table, run.key, table.registered, to);
    table.registered = to;
  }
}

void KvSpanCache::release(std::uint32_t id) {
  Table& table = tables_[id];
  free_unnamed(table.blocks - table.registered);
  for (auto it = table.entries.rbegin(); it != table.entries.rend(); ++it) {
    if (it->span == kNone) {
      free_unnamed(it->to - it->from);
    } else {
      let_go(it->span, it->to);
    }
  }
  table.entries.clear();
  table.blocks = table.registered = table.run = 0;
}

std::vector<std::string> KvSpanCache::check_invariants() const {
  std::vector<std::string> problems;
  const auto fail = [&](std::string problem) { problems.push_back(std::move(problem)); };
  // Holders as the tables record them.
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> holds;
  std::uint64_t held_blocks = 0;
  for (std::uint32_t t = 0; t < tables_.size(); ++t) {
    const Table& table = tables_[t];
    if (!table.open) continue;
    std::uint32_t pos = 0;
    for (const Entry& entry : table.entries) {
      if (entry.from != pos || entry.to <= entry.from) fail("table " + std::to_string(t) + ": entries are not contiguous");
      if (entry.span == kNone) {
        held_blocks += entry.to - entry.from;
      } else {
        ++holds[{entry.span, entry.to}];
        if (spans_[entry.span].lo != entry.from) fail("table " + std::to_string(t) + " holds a span from its middle");
      }
      pos = entry.to;
    }
    if (pos != table.registered || table.registered > table.blocks) fail("table " + std::to_string(t) + ": registered blocks disagree");
    held_blocks += table.blocks - table.registered;
  }
  std::uint64_t piece_blocks = 0, pieces = 0;
  std::uint32_t before = kNone;
  for (std::uint32_t p = oldest_; p != kNone; p = pieces_[p].newer) {
    if (pieces_[p].older != before) fail("the free list's links disagree");
    if (pieces_[p].hi <= pieces_[p].lo) fail("an empty piece in the free list");
    piece_blocks += pieces_[p].hi - pieces_[p].lo;
    before = p;
    if (++pieces > pieces_.size()) {
      fail("the free list loops");
      break;
    }
  }
  if (before != newest_) fail("the free list's newest end is wrong");
  if (unused_ + piece_blocks != free_) fail("free blocks are not what the free list holds");
  std::uint32_t live_spans = 0;
  for (std::uint32_t n = 0; n < nodes_.size(); ++n) {
    const Node& node = nodes_[n];
    if (node.spans.empty()) continue;
    if (node_of(node.key) != n) fail("node " + std::to_string(n) + " is not in the index");
    std::uint32_t end = 0;
    for (const std::uint32_t id : node.spans) {
      const Span& span = spans_[id];
      ++live_spans;
      const std::string name = "span " + std::to_string(id);
      if (span.node != n) fail(name + " names another node");
      if (span.lo < end) fail(name + " overlaps the span before it");
      end = span.top;
      if (!(span.lo <= span.held && span.held <= span.top && span.lo < span.top)) fail(name + ": bounds out of order");
      std::uint32_t held = span.lo;
      for (const Holder& holder : span.holders) {
        held = std::max(held, holder.to);
        const auto it = holds.find({id, holder.to});
        if (it == holds.end() || it->second != holder.count) fail(name + ": holders disagree with the tables");
        if (it != holds.end()) holds.erase(it);
      }
      if (held != span.held) fail(name + ": held blocks are not its longest holder's");
      held_blocks += span.held - span.lo;
      // Its pieces tile [held, top), the oldest at the top.
      std::uint32_t top = span.top;
      for (std::uint32_t p = span.oldest; p != kNone; p = pieces_[p].below) {
        if (pieces_[p].span != id || pieces_[p].hi != top) fail(name + ": its free pieces do not tile its free blocks");
        top = pieces_[p].lo;
        if (top < span.lo) break;
      }
      if (top != span.held) fail(name + ": its free pieces do not reach its held blocks");
    }
  }
  if (!holds.empty()) fail("a table holds a span that does not record it");
  if (live_spans + spare_spans_.size() != spans_.size()) fail("spans lost");
  if (node_index_.size() + spare_nodes_.size() != nodes_.size()) fail("nodes lost");
  if (held_blocks + free_ != capacity_) fail("held and free blocks do not add up to the cache");
  return problems;
}

}  // namespace meshsim::cluster
