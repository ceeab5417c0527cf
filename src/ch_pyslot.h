/* Reading one __slots__ member of a Python object straight from its memory, as the member's
 * descriptor does (PyMember_GetOne), for a check made on every call: whether the object still
 * holds the very object it held (BoundedLoad's _LiveLoad.take compares a router's _weights).
 *
 *   ch_slot_offset(d)        the offset of the object pointer that descriptor d reads, if d is
 *                            a member descriptor of an object slot (T_OBJECT_EX, what
 *                            __slots__ makes), else -1
 *   ch_slot_peek(obj, off)   that pointer (NULL: the slot is unset), borrowed, read without a
 *                            reference: fit only for an identity test
 *
 * A free-threaded CPython writes slots with atomic stores; the read here is a relaxed atomic
 * load, so it races with nothing.  PyMemberDescrObject is CPython's (Include/cpython/
 * descrobject.h), the same from 3.8 to 3.14. */
#ifndef CH_PYSLOT_H
#define CH_PYSLOT_H

#include <Python.h>
#if PY_VERSION_HEX >= 0x030C0000
#  define CH__T_OBJECT_EX Py_T_OBJECT_EX
#else
#  include <structmember.h>
#  define CH__T_OBJECT_EX T_OBJECT_EX
#endif

static inline Py_ssize_t ch_slot_offset(PyObject *d) {
    if (Py_TYPE(d) != &PyMemberDescr_Type) return -1;
    const PyMemberDef *m = ((PyMemberDescrObject *)d)->d_member;
    return m->type == CH__T_OBJECT_EX && m->offset > 0 ? m->offset : -1;
}

static inline PyObject *ch_slot_peek(PyObject *obj, Py_ssize_t off) {
    PyObject **p = (PyObject **)(void *)((char *)obj + off);
#if defined(__GNUC__) || defined(__clang__)
    return __atomic_load_n(p, __ATOMIC_RELAXED);
#else
    return *(PyObject *volatile *)p;
#endif
}

#endif /* CH_PYSLOT_H */
