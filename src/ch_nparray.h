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
    return ch__np_type != NULL && ch__np_new != NULL;
}

/* A new C-contiguous, writeable 1-d array of n items of NumPy type number typenum (numbers
 * left unset; an object array's items NULL, each to be written), or NULL with an exception
 * set.  Only after ch_np_init returned 1. */
static inline PyObject *ch_np_empty1(Py_ssize_t n, int typenum) {
    return ch__np_new(ch__np_type, 1, &n, typenum, NULL, NULL, 0, 0, NULL);
}

#endif /* CH_NPARRAY_H */
