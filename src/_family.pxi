# The modern family's shared pieces: test hooks of CRC-32C (ch_crc.h; AnchorHash, DxHash), and
# _NBuckets, the base of the cores over n numbered buckets (JumpBackHash, FlipHash, PowerHash,
# BinomialHash): bucket i is nodes[i] for a router; with no names (nodes = ()), the core routes
# to the bare bucket numbers 0 .. n - 1 for any n up to 2**31 - 1 (the *_bucket functions
# batch-call it through the chunk driver, so threads= works as for every router).

def _crc32c_u64(uint64_t key, uint64_t seed, bint software=False):
    """The CRC-32C register seed & 0xFFFFFFFF advanced over key's 8 little-endian bytes, as
    SSE4.2's crc32q computes it (a test hook: software=True forces the table path)."""
    if software:
        return ch_crc32c_u64_sw(key, seed)
    return ch_crc32c_u64(key, seed)


def _crc32c_hardware(object use=None):
    """Whether the crc32 instruction is used (a test hook: use=False forces the table path,
    use=True restores the instruction where the CPU has it); returns the old setting."""
    global ch_crc32c_hw
    old = bool(ch_crc32c_hw)
    if use is not None:
        ch_crc32c_hw = 0
        if use:
            ch_crc32c_detect()
    return old


cdef class _NBuckets(_Router):
    """n numbered buckets: bucket i is nodes[i], or bare bucket numbers when nodes is ()."""
    cdef readonly uint32_t n

    cdef int init_buckets(self, tuple nodes, _Hasher hasher, Py_ssize_t n, str what) except -1:
        if n < 0 or n > 0x7FFFFFFF:
            raise ValueError(f"{what} supports at most 2**31 - 1 buckets")
        if nodes and len(nodes) != n:
            raise ValueError(f"{what}: {len(nodes)} names for {n} buckets")
        self.init_router(nodes, _raw_int_hasher(hasher), what)
        self.n = <uint32_t>n
        self.live = n
        return 0
