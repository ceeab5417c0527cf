/* New 1-d NumPy arrays made from C, for the small-batch calls (src/_fastcalls.pxi), where
 * np.empty's Python call is most of the cost of a call on one key (~70 of ~110 ns).  The build
 * does not need NumPy's headers, so this reads the C-API table NumPy exports to compiled
 * extensions (the capsule _ARRAY_API of numpy._core._multiarray_umath, numpy.core's before
 * NumPy 2), as NumPy's own import_array does, and calls two of its entries: 2, the ndarray
 * type, and 93, PyArray_New.  Their places are NumPy's ABI, the same in 1.x and 2.x; they are
 * used only when entry 0 (PyArray_GetNDArrayCVersion) answers an ABI this was written for
 * (0x01000009: NumPy 1.x; 0x02000000: 2.x) and npy_intp is Py_ssize_t: anything else, and
 * the callers keep np.empty. */
#ifndef CH_NPARRAY_H
#define CH_NPARRAY_H

#include <Python.h>

typedef PyObject *(*ch__np_new_fn)(PyTypeObject *type, int nd, const Py_ssize_t *dims,
                                   int typenum, const Py_ssize_t *strides, void *data,
                                   int itemsize, int flags, PyObject *obj);
typedef unsigned int (*ch__np_abi_fn)(void);

static ch__np_new_fn ch__np_new = NULL;
static PyTypeObject *ch__np_type = NULL;

/* The head of NumPy's array object (PyArrayObject_fields, whose order NumPy's ABI keeps: its
 * own PyArray_DATA, PyArray_NDIM, ... macros read these fields in place), as far as flags. */
typedef struct {
    PyObject_HEAD
    char *data;
    int nd;
    Py_ssize_t *dimensions;
    Py_ssize_t *strides;
    PyObject *base;
    PyObject *descr;
    int flags;
} ch__np_head;

/* Result arrays recycled: a call on n <= CH_NP_SPARE keys keeps a reference to the array it
 * returns, and the next call of that n whose typenum is the same returns it again when the
 * caller has let it go (its reference count is back to 1: no one else holds it, not even a
 * view, a memoryview or a weak reference) and it is the array it was made (the same data,
 * descr, flags, shape and strides, no base): the values are all written again, so the caller
 * sees a new array of the same kind; what is skipped is NumPy's allocation and freeing, about
 * 750 of a one-key call's 1,700 instructions.  CPython's zip() and enumerate() reuse their
 * result tuples the same way.  Only where the GIL guards the check (not in a free-threaded
 * build), and only once ch_np_init has checked the head's layout on an array of its own. */
#define CH_NP_SPARE 16
typedef struct {
    PyObject *arr;      /* a reference of ours, or NULL */
    int typenum, flags;
    char *data;
    PyObject *descr;
    Py_ssize_t stride;
} ch__np_slot;
static ch__np_slot ch__np_spare[CH_NP_SPARE + 1];
static int ch__np_recycle = 0;

/* Whether ch__np_head reads an array of ch__np_new's as its buffer describes it. */
static int ch__np_head_ok(void) {
#ifdef Py_GIL_DISABLED
    return 0;
#else
    Py_ssize_t n = 3;
    PyObject *a = ch__np_new(ch__np_type, 1, &n, 5 /* NPY_INT */, NULL, NULL, 0, 0, NULL);
    if (a == NULL) {
        PyErr_Clear();
        return 0;
    }
    Py_buffer b;
    int ok = 0;
    if (PyObject_GetBuffer(a, &b, PyBUF_WRITABLE | PyBUF_STRIDES) == 0) {
        const ch__np_head *f = (const ch__np_head *)a;
        ok = Py_TYPE(a) == ch__np_type && Py_REFCNT(a) == 2 && f->data == (char *)b.buf &&
             f->nd == 1 && b.ndim == 1 && f->dimensions[0] == 3 && b.shape[0] == 3 &&
             f->strides[0] == b.strides[0] && f->strides[0] == b.itemsize &&
             f->base == NULL && f->descr != NULL && ch__np_type->tp_weaklistoffset > 0;
        PyBuffer_Release(&b);
    } else {
        PyErr_Clear();
    }
    Py_DECREF(a);
    return ok;
#endif
}

/* From the table's pointer (the capsule's): 1 when the arrays can be made here. */
static int ch_np_init(void *table) {
    void **api = (void **)table;
    ch__np_new = NULL;
    ch__np_type = NULL;
    if (api == NULL || sizeof(Py_ssize_t) != sizeof(Py_intptr_t) || api[0] == NULL)
        return 0;
    const unsigned int abi = ((ch__np_abi_fn)api[0])();
    if (abi != 0x01000009u && abi != 0x02000000u) return 0;
    ch__np_type = (PyTypeObject *)api[2];
    ch__np_new = (ch__np_new_fn)api[93];
    if (ch__np_type == NULL || ch__np_new == NULL) return 0;
    ch__np_recycle = ch__np_head_ok();
    return 1;
}

/* A new C-contiguous, writeable 1-d array of n items of NumPy type number typenum (numbers
 * left unset; an object array's items NULL, each to be written), or NULL with an exception
 * set.  Only after ch_np_init returned 1. */
static inline PyObject *ch_np_empty1(Py_ssize_t n, int typenum) {
    return ch__np_new(ch__np_type, 1, &n, typenum, NULL, NULL, 0, 0, NULL);
}

/* ch_np_empty1 for a call's result: the array of CH_NP_SPARE's note when it may be given out
 * again (its values left as they were, each to be written), else a new one, kept for the next
 * call.  A new reference, or NULL with an exception set. */
static inline PyObject *ch_np_result1(Py_ssize_t n, int typenum) {
    if (!ch__np_recycle || n > CH_NP_SPARE || n < 0) return ch_np_empty1(n, typenum);
    ch__np_slot *s = &ch__np_spare[n];
    PyObject *a = s->arr;
    if (a != NULL && Py_REFCNT(a) == 1 && s->typenum == typenum) {
        const ch__np_head *f = (const ch__np_head *)a;
        if (*(PyObject **)((char *)a + ch__np_type->tp_weaklistoffset) == NULL &&
            f->data == s->data && f->nd == 1 && f->dimensions[0] == n &&
            f->strides[0] == s->stride && f->base == NULL && f->descr == s->descr &&
            f->flags == s->flags) {
            Py_INCREF(a);
            return a;
        }
    }
    PyObject *b = ch_np_empty1(n, typenum);
    if (b == NULL) return NULL;
    const ch__np_head *f = (const ch__np_head *)b;
    Py_INCREF(b);
    s->arr = b;
    s->typenum = typenum;
    s->flags = f->flags;
    s->data = f->data;
    s->descr = f->descr;
    s->stride = f->strides[0];
    Py_XDECREF(a);  /* the old array, once the slot no longer names it */
    return b;
}

/* The recycling's switch (a test hook): use 0 turns it off, 1 on where ch_np_init allowed the
 * table and the head checks out, -1 leaves it; returns the old setting. */
static inline int ch_np_recycling(int use) {
    const int old = ch__np_recycle;
    if (use >= 0) ch__np_recycle = use && ch__np_new != NULL ? ch__np_head_ok() : 0;
    return old;
}

#endif /* CH_NPARRAY_H */
