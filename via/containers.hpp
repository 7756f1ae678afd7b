// Containers for the data path: a vector that never allocates and a FIFO
// that stops allocating once grown to the depth in use.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

namespace via {

// Up to N elements in place: no allocation. Copies copy the elements in use.
template <class T, size_t N>
class InlineVec {
 public:
  InlineVec() {}  // NOLINT: the elements past size() stay uninitialised
  InlineVec(const InlineVec& o) : n_(o.n_) { std::copy(o.items_, o.items_ + n_, items_); }
  InlineVec& operator=(const InlineVec& o) {
    n_ = o.n_;
    std::copy(o.items_, o.items_ + n_, items_);
    return *this;
  }
  size_t size() const { return n_; }
  bool full() const { return n_ == N; }
  void push_back(const T& v) { items_[n_++] = v; }  // the caller checks full()
  void clear() { n_ = 0; }
  T& operator[](size_t i) { return items_[i]; }
  const T& operator[](size_t i) const { return items_[i]; }
  T* begin() { return items_; }
  T* end() { return items_ + n_; }
  const T* begin() const { return items_; }
  const T* end() const { return items_ + n_; }

 private:
  static_assert(std::is_trivially_copyable_v<T>);
  uint32_t n_ = 0;
  T items_[N];
};

// A FIFO on a ring that doubles when full: once it has grown to the depth in
// use, pushes and pops allocate nothing.
template <class T>
class Fifo {
 public:
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  T& operator[](size_t i) { return buf_[(head_ + i) & (buf_.size() - 1)]; }
  T& front() { return buf_[head_]; }
  T& back() { return (*this)[size_ - 1]; }
  void push_back(T v) {
    if (size_ == buf_.size()) grow();
    (*this)[size_++] = std::move(v);
  }
  void pop_front() {
    if constexpr (!std::is_trivially_destructible_v<T>) buf_[head_] = T();
    head_ = (head_ + 1) & (buf_.size() - 1);
    --size_;
  }
  void pop_front(size_t n) {
    while (n-- > 0) pop_front();
  }
  void clear() { pop_front(size_); }

 private:
  void grow() {
    std::vector<T> b(buf_.empty() ? 8 : 2 * buf_.size());  // a power of two
    for (size_t i = 0; i < size_; ++i) b[i] = std::move((*this)[i]);
    buf_.swap(b);
    head_ = 0;
  }
  std::vector<T> buf_;
  size_t head_ = 0, size_ = 0;
};

}  // namespace via
