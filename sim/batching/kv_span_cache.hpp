#pragma once

#include <cstdint>
#include <vector>

#include "sim/batching/kv_cache.hpp"
#include "sim/engine/flat_u64_map.hpp"

namespace meshsim::cluster {

// KvCache in spans instead of blocks, so that its work per request grows with the runs of
// its tokens (TokenStream) and the spans it touches, not with its blocks: a Mooncake
// request of 12,000 prompt tokens is 750 blocks of 16 tokens but 24 named runs.
//
// Blocks are named by position: block j of a request holds its tokens [j * b, (j + 1) * b)
// and belongs to the run holding its last token. The registry keys each run by its tokens
// and everything before them (a node: the hash of the runs up to it and its own name, the
// chained block hash at run granularity; a request's own runs also carry a salt drawn when
// it joins, so they match only its own table). Within a node, registered blocks form
// disjoint spans [lo, top) of positions, sorted; each span was registered by one request
// and is held as prefixes [lo, to) by the tables holding it (its registrant from its lo to
// its top, a hit from its lo: a prefix walk enters a span only at its lo), so the span's
// held blocks are [lo, held), held = the longest prefix held, and its free blocks are
// [held, top). Those sit in the free list as pieces, the span's oldest at its top (a block
// is freed when its last holder lets go, which frees a span from the top down); so the
// least recently freed block, which allocation reuses, is always the top of its span.
// Blocks no request can hit (duplicates, partial or never registered) are counted, not
// named, and sit in the free list as counts.
//
// Costs: find_prefix O(nodes walked * log spans per node + spans found); take_prefix,
// grow and release O(spans and pieces touched); register_full O(runs crossed * log spans
// per node + spans met); open O(runs). Memory O(spans + pieces + tables).
class KvSpanCache final : public KvCache {
 public:
  KvSpanCache(std::uint32_t blocks, std::uint32_t block_size, bool prefix_caching);

  std::uint32_t blocks() const override { return capacity_; }
  std::uint32_t free_blocks() const override { return free_; }
  bool prefix_caching() const override { return prefix_caching_; }
  std::uint64_t evictions() const override { return evictions_; }

  std::uint32_t open(const TokenStream& stream) override;
  void close(std::uint32_t table) override;
  std::uint32_t table_blocks(std::uint32_t table) const override { return tables_[table].blocks; }
  Prefix find_prefix(std::uint32_t table, std::uint32_t lookable) override;
  void take_prefix(std::uint32_t table) override;
  void grow(std::uint32_t table, std::uint32_t blocks) override;
  void register_full(std::uint32_t table, std::uint32_t full_blocks) override;
  void release(std::uint32_t table) override;
  std::uint32_t cached_prefix_blocks(const TokenStream& stream, std::uint32_t lookable) const override;
  std::vector<std::string> check_invariants() const override;

 private:
  static constexpr std::uint32_t kNone = ~0u;
  // Free blocks, in the free list's order (oldest first). Of span `span`: positions
  // [lo, hi), reused from hi down; span kNone: hi - lo blocks nobody can hit.
  struct Piece {
    std::uint32_t span = kNone;
    std::uint32_t lo = 0, hi = 0;
    std::uint32_t older = kNone, newer = kNone;  // in the free list
    std::uint32_t above = kNone, below = kNone;  // the span's other pieces (above: older)
  };
  struct Holder {
    std::uint32_t to = 0;  // holds [lo, to)
    std::uint32_t count = 0;
  };
  struct Span {
    std::uint32_t node = kNone;
    std::uint32_t lo = 0, top = 0, held = 0;
    std::uint32_t oldest = kNone, newest = kNone;  // its free pieces, top down
    std::vector<Holder> holders;
  };
  struct Node {
    std::uint64_t key = 0;
    std::vector<std::uint32_t> spans;  // by lo
  };
  // A run's node and the positions of the blocks whose last token it holds, [first, end)
  // (end kNone: the output's, open).
  struct RunNode {
    std::uint64_t key = 0;
    std::uint32_t first = 0, end = kNone;
  };
  // Positions [from, to) of a table: a span's (from its lo), or unregistered (span kNone).
  struct Entry {
    std::uint32_t span = kNone;
    std::uint32_t from = 0, to = 0;
  };
  struct Table {
    std::vector<RunNode> runs;
    std::vector<Entry> entries;  // positions [0, registered), in order
    std::uint32_t blocks = 0;      // [registered, blocks): held, not yet registered
    std::uint32_t registered = 0;
    std::uint32_t run = 0;  // runs[run] holds position `registered`
    bool open = false;
  };
  struct Found {
    std::uint32_t span = kNone;
    std::uint32_t to = 0;
  };

  // salt 0: the walk stops at the first run of the request's own tokens.
  void make_runs(const TokenStream& stream, std::uint64_t salt, std::vector<RunNode>& runs) const;
  // The longest registered prefix of `runs`, at most `lookable` blocks; the spans taken
  // into `found` (if given) and the free blocks among them into `free`.
  std::uint32_t walk(const std::vector<RunNode>& runs, std::uint32_t lookable, std::vector<Found>* found,
                     std::uint32_t* free) const;
  std::uint32_t node_of(std::uint64_t key) const;
  // The span of `node` starting at `pos`, or kNone.
  std::uint32_t span_at(const Node& node, std::uint32_t pos) const;
  void register_in(Table& table, std::uint64_t key, std::uint32_t from, std::uint32_t to);
  void add_entry(Table& table, std::uint32_t span, std::uint32_t from, std::uint32_t to);
  void hold(Span& span, std::uint32_t to);
  void unhold(Span& span, std::uint32_t to);
  void let_go(std::uint32_t span, std::uint32_t to);
  void take_free(std::uint32_t span, std::uint32_t to);
  void free_unnamed(std::uint32_t blocks);
  void free_span_blocks(std::uint32_t span, std::uint32_t lo, std::uint32_t hi);
  std::uint32_t new_piece(const Piece& piece);
  void unlink_piece(std::uint32_t piece);
  void drop_span(std::uint32_t span);

  std::uint32_t capacity_;
  std::uint32_t block_size_;
  bool prefix_caching_;
  std::uint32_t free_;
  std::uint32_t unused_;  // never allocated: reused before every freed block
  std::uint64_t evictions_ = 0;
  std::uint64_t salt_ = 0;
  std::vector<Piece> pieces_;
  std::vector<std::uint32_t> spare_pieces_;
  std::uint32_t oldest_ = kNone, newest_ = kNone;  // the free list's ends
  std::vector<Span> spans_;
  std::vector<std::uint32_t> spare_spans_;
  std::vector<Node> nodes_;
  std::vector<std::uint32_t> spare_nodes_;
  engine::FlatU64Map node_index_;
  std::vector<Table> tables_;
  std::vector<std::uint32_t> spare_tables_;
  std::vector<Found> found_;  // what the last find_prefix found
  mutable std::vector<RunNode> scratch_runs_;
};

}  // namespace meshsim::cluster
