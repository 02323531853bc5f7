#!/usr/bin/env python3
"""Generate XTypes 1.3 type-representation golden data (TypeObject, TypeIdentifier, TypeInformation)
for every type declared in gen_vectors.py, as computed by Cyclone DDS 11.0.1.

Usage (cyclonedds must already be installed, this script installs nothing):

    pip install cyclonedds==11.0.1
    python3 gen_typeobjects.py            # (re)writes typeobjects.json next to this script
    python3 gen_typeobjects.py --check    # regenerates in memory, exits 1 if typeobjects.json differs
    python3 gen_typeobjects.py --stdout   # prints the JSON instead of writing the file

Where the values come from:
  * PRIMARY: cyclonedds-python's own XTypes builder (cyclonedds.idl._xt_builder.XTBuilder), i.e.
    T.__idl__.fill_type_data(). This is the TypeInformation + TypeMapping the binding hands to the C
    library when a Topic is created; the C library then announces that TypeInformation in SEDP and
    answers TypeLookup requests with those TypeObjects.
  * C CHECK 1 (libddsc in the wheel, through a DomainParticipant on loopback only, see
    gen_vectors.CYCLONE_CONFIG): a Topic is created from the Python type.  Creating it makes C
    re-serialize and MD5 every TypeObject of the TypeMapping and refuse the topic if an identifier
    does not match (ddsi_typelib.c: ddsi_type_new).  Then
      - dds_get_typeinfo(topic) + C serializer (DDS_XTypes_TypeInformation) = the exact bytes C puts
        in PID_TYPE_INFORMATION (ddsi_plist.c: ser_type_information);
      - dds_get_typeobj(participant, id) for the type and each dependency: C rebuilds the TypeObject
        from its internal type model (ddsi_xt_get_typeobject, as for a TypeLookup reply) and the C
        serializer writes it; its MD5 must give the identifier;
      - ddsi_typeid_ser: C's serialization of each TypeIdentifier.
  * C CHECK 2, independent: the IDL compiler's own implementation (libcycloneddsidl in the wheel,
    generate_type_meta_ser = what `idlc -l c` embeds as TYPE_INFO_CDR / TYPE_MAP_CDR in generated C
    code).  The script prints IDL for the gen_vectors module from the Python classes, parses it with
    libidl through ctypes and compares.  Where idlc differs, both are recorded.

See TYPEOBJECTS.md next to this file for the JSON format and the rules observed.
"""

import argparse
import ctypes as ct
import glob
import hashlib
import json
import os
import sys
from enum import Enum
from inspect import isclass

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True   # importing gen_vectors must not leave a __pycache__ in the tests
import gen_vectors as gv  # noqa: E402  (type declarations + CLayer; its main() is guarded)

import cyclonedds  # noqa: E402
from cyclonedds.idl import IdlStruct, IdlUnion, IdlEnum, IdlBitmask  # noqa: E402
from cyclonedds.idl import types as pt  # noqa: E402
from cyclonedds.idl._support import Endianness  # noqa: E402
from cyclonedds.idl._type_normalize import (get_extended_type_hints, get_idl_annotations,  # noqa: E402
                                            get_idl_field_annotations, WrapOpt)
from cyclonedds.idl._xt_builder import XTBuilder  # noqa: E402
from cyclonedds.idl._typesupport.DDS import XTypes as xt  # noqa: E402

IDL_KINDS = (IdlStruct, IdlUnion, IdlEnum, IdlBitmask)


def declared_types():
    """All IDL types declared in gen_vectors, in declaration order (aliases such as P = Point skipped)."""
    out = []
    for name, t in vars(gv).items():
        if (isclass(t) and issubclass(t, IDL_KINDS) and t.__module__ == gv.__name__
                and t.__name__ == name and t not in out):
            out.append(t)
    return out


def scoped_name(t):
    return t.__idl_typename__.replace(".", "::")


def kind_of(t):
    for k, base in (("struct", IdlStruct), ("union", IdlUnion), ("enum", IdlEnum), ("bitmask", IdlBitmask)):
        if issubclass(t, base):
            return k
    raise TypeError(t)


# ---------------------------------------------------------------------------------------------
# XCDR2 helpers (Python serializer of the XTypes IDL types shipped in cyclonedds-python)
# ---------------------------------------------------------------------------------------------


def xcdr2(obj):
    """XCDR2 little endian WITHOUT the 4-byte encapsulation header: TypeObjects, TypeIdentifiers
    and TypeInformation are hashed / put in PID_TYPE_INFORMATION / nested in TypeLookup replies
    as bare XCDR2 LE bodies."""
    return obj.serialize(endianness=Endianness.Little, use_version_2=True)[4:]


def from_xcdr2(cls, data):
    return cls.deserialize(data, has_header=False, use_version_2=True)


def type_name_of(to):
    """Fully qualified name carried in a COMPLETE TypeObject."""
    c = to.complete
    inner = {xt.TK_STRUCTURE: lambda: c.struct_type, xt.TK_UNION: lambda: c.union_type,
             xt.TK_ENUM: lambda: c.enumerated_type, xt.TK_BITMASK: lambda: c.bitmask_type}[c.discriminator]()
    return inner.header.detail.type_name


def side(to_bytes, ek):
    """One equivalence kind: TypeObject + its hash + the serialized TypeIdentifier."""
    h = hashlib.md5(to_bytes).digest()[:14]
    return {
        "type_object": to_bytes.hex(),
        "type_object_size": len(to_bytes),
        "hash": h.hex(),
        # TypeIdentifier is a final union switch(octet): discriminator EK_MINIMAL/EK_COMPLETE + 14 bytes
        "type_identifier": (bytes([ek]) + h).hex(),
    }


class Catalog:
    """Named type -> (minimal TypeObject bytes, complete TypeObject bytes), from one producer."""

    def __init__(self):
        self.by_name = {}
        self.by_id = {}   # serialized TypeIdentifier bytes -> type name

    def add(self, name, min_bytes, compl_bytes):
        prev = self.by_name.get(name)
        if prev is not None and prev != (min_bytes, compl_bytes):
            raise AssertionError(f"two different TypeObjects for {name}")
        self.by_name[name] = (min_bytes, compl_bytes)
        self.by_id[bytes([xt.EK_MINIMAL]) + hashlib.md5(min_bytes).digest()[:14]] = name
        self.by_id[bytes([xt.EK_COMPLETE]) + hashlib.md5(compl_bytes).digest()[:14]] = name

    def add_typemap(self, typemap):
        """Add every type of a TypeMapping; checks each identifier = MD5 of its TypeObject."""
        minimal = {}
        for pair in typemap.identifier_object_pair_minimal:
            b = xcdr2(pair.type_object)
            assert xcdr2(pair.type_identifier)[1:] == hashlib.md5(b).digest()[:14], "minimal id != md5"
            minimal[xcdr2(pair.type_identifier)] = b
        complete = {}
        for pair in typemap.identifier_object_pair_complete:
            b = xcdr2(pair.type_object)
            assert xcdr2(pair.type_identifier)[1:] == hashlib.md5(b).digest()[:14], "complete id != md5"
            complete[xcdr2(pair.type_identifier)] = (type_name_of(pair.type_object), b)
        for p in typemap.identifier_complete_minimal:
            name, cb = complete[xcdr2(p.type_identifier1)]
            self.add(name, minimal[xcdr2(p.type_identifier2)], cb)


def typeinfo_deps(ti_bytes):
    """(minimal dependent ids, complete dependent ids), each a list of serialized TypeIdentifiers."""
    ti = from_xcdr2(xt.TypeInformation, ti_bytes)
    return ([xcdr2(d.type_id) for d in ti.minimal.dependent_typeids],
            [xcdr2(d.type_id) for d in ti.complete.dependent_typeids])


# ---------------------------------------------------------------------------------------------
# Python binding (primary source)
# ---------------------------------------------------------------------------------------------


def python_type_data(t, catalog):
    """Returns TypeInformation bytes (None for enum/bitmask) and fills catalog; raises if the
    binding cannot build the type representation."""
    if issubclass(t, (IdlStruct, IdlUnion)):
        t.__idl__.fill_type_data()
        ti_bytes, _ = t.__idl__._xt_bytedata   # exactly the bytes handed to the C library
        # the stored bytes are the binding's own serialization of the objects; keep them honest
        assert ti_bytes == xcdr2(t.__idl__.get_type_info())
        catalog.add_typemap(t.__idl__.get_type_mapping())
        return ti_bytes
    # enums and bitmasks cannot be topic types: no TypeInformation, but they have TypeObjects
    h = XTBuilder._resolve_typehash("", t)
    catalog.add(scoped_name(t), h.minimal_type_object_serialized, h.complete_type_object_serialized)
    return None


# ---------------------------------------------------------------------------------------------
# C library checks (libddsc from the wheel, through gen_vectors.CLayer's loopback participant)
# ---------------------------------------------------------------------------------------------


class CTypeChecks:
    def __init__(self):
        self.cl = gv.CLayer()
        lib = self.lib = self.cl.lib
        sigs = {
            "dds_get_typeinfo": ([ct.c_int32, ct.POINTER(ct.c_void_p)], ct.c_int32),
            "dds_free_typeinfo": ([ct.c_void_p], ct.c_int32),
            "dds_get_typeobj": ([ct.c_int32, ct.c_void_p, ct.c_int64, ct.POINTER(ct.c_void_p)], ct.c_int32),
            "dds_free_typeobj": ([ct.c_void_p], ct.c_int32),
            "ddsi_typeid_ser": ([ct.c_void_p, ct.POINTER(ct.c_void_p), ct.POINTER(ct.c_uint32)], None),
            "dds_free": ([ct.c_void_p], None),
        }
        for fn, (argtypes, restype) in sigs.items():
            getattr(lib, fn).argtypes = argtypes
            getattr(lib, fn).restype = restype
        # struct dds_cdrstream_desc of the XTypes types, exported by libddsc
        self.desc = {n: ct.addressof(ct.c_char.in_dll(lib, f"DDS_XTypes_{n}_cdrstream_desc"))
                     for n in ("TypeInformation", "TypeObject", "TypeIdentifier")}

    def _write(self, desc, addr):
        """C serializer, XCDR2 little endian, no header (what xcdr2_ser in ddsi_typelib.c does)."""
        ost = gv._Stream()
        self.lib.dds_ostreamLE_init(ct.byref(ost), self.cl.allocator, 0, 2)
        ok = self.lib.dds_stream_write_sampleLE(ct.byref(ost), self.cl.allocator, addr, self.desc[desc])
        out = ct.string_at(ost.buf, ost.index) if ok else None
        self.lib.dds_ostreamLE_fini(ct.byref(ost), self.cl.allocator)
        return out

    def _read_typeid(self, tid):
        """Serialized TypeIdentifier -> C DDS_XTypes_TypeIdentifier (= ddsi_typeid_t) in a buffer."""
        size = gv._CdrstreamDesc.from_address(self.desc["TypeIdentifier"]).size
        src = ct.create_string_buffer(tid, len(tid))
        ist = gv._Stream()
        self.lib.dds_istream_init(ct.byref(ist), len(tid), ct.cast(src, ct.c_void_p), 2)
        obj = ct.create_string_buffer(size)
        self.lib.dds_stream_read_sample(ct.byref(ist), ct.cast(obj, ct.c_void_p), self.cl.allocator,
                                        self.desc["TypeIdentifier"])
        return obj

    def typeid_ser(self, tid):
        obj = self._read_typeid(tid)
        buf, sz = ct.c_void_p(), ct.c_uint32()
        self.lib.ddsi_typeid_ser(ct.cast(obj, ct.c_void_p), ct.byref(buf), ct.byref(sz))
        out = ct.string_at(buf, sz.value)
        self.lib.dds_free(buf)
        return out

    def typeobj(self, tid):
        """TypeObject C serves for this identifier (rebuilt from its type model), C-serialized."""
        obj = self._read_typeid(tid)
        to = ct.c_void_p()
        if self.lib.dds_get_typeobj(self.cl.dp._ref, ct.cast(obj, ct.c_void_p), 0, ct.byref(to)) != 0 or not to:
            return None
        out = self._write("TypeObject", to)
        self.lib.dds_free_typeobj(to)
        return out

    def topic_typeinfo(self, t, ti_bytes):
        """{"topic_created": bool, "type_information": "same" or C's bytes}."""
        # Creating the topic makes C check every (id, TypeObject) pair of the binding's TypeMapping
        # (ddsi_type_new: "non-matching type identifier"); CLayer.topic returns None if C refused.
        tp = self.cl.topic(t)
        if tp is None:
            return {"topic_created": False, "type_information": None}
        ti = ct.c_void_p()
        if self.lib.dds_get_typeinfo(tp._ref, ct.byref(ti)) != 0:
            raise RuntimeError("dds_get_typeinfo failed")
        c_ti = self._write("TypeInformation", ti)
        self.lib.dds_free_typeinfo(ti)
        return {"topic_created": True, "type_information": "same" if c_ti == ti_bytes else c_ti.hex()}

    def type_objects(self, ids, catalog):
        """For each serialized TypeIdentifier: does C serve the same TypeObject, hashing to the id,
        and serialize the identifier the same way?  Only works once a topic using it exists."""
        tobj, tids = {}, {}
        for tid in ids:
            tname = catalog.by_id[tid]
            ours = catalog.by_name[tname][0 if tid[0] == xt.EK_MINIMAL else 1]
            c_to = self.typeobj(tid)
            key = f"{tname} {'minimal' if tid[0] == xt.EK_MINIMAL else 'complete'}"
            if c_to is None:
                tobj[key] = "not found"
            elif c_to != ours:
                tobj[key] = c_to.hex()
            elif hashlib.md5(c_to).digest()[:14] != tid[1:]:
                tobj[key] = "hash mismatch"
            c_tid = self.typeid_ser(tid)
            if c_tid != tid:
                tids[key] = c_tid.hex()
        return {"type_objects": tobj or "same", "type_identifiers": tids or "same"}


# ---------------------------------------------------------------------------------------------
# idlc (libcycloneddsidl) check: IDL printed from the Python classes, parsed by libidl
# ---------------------------------------------------------------------------------------------

IDL_PRIMITIVES = {
    bool: "boolean", pt.byte: "octet", pt.char: "char", pt.int8: "int8", pt.uint8: "uint8",
    pt.int16: "int16", pt.uint16: "uint16", pt.int32: "int32", pt.uint32: "uint32",
    pt.int64: "int64", pt.uint64: "uint64", pt.float32: "float", pt.float64: "double", str: "string",
}


def idl_type(ft):
    """(type_spec, array dimensions) for a Python field type."""
    if isinstance(ft, pt.array):
        dims = []
        while isinstance(ft, pt.array):
            dims.append(ft.length)
            ft = ft.subtype
        spec, inner = idl_type(ft)
        assert not inner
        return spec, dims
    if isinstance(ft, pt.sequence):
        spec, dims = idl_type(ft.subtype)
        assert not dims, "sequence of array needs a typedef"
        # "> >": libidl's scanner reads ">>" as the shift operator
        close = " >" if spec.endswith(">") else ">"
        return (f"sequence<{spec}, {ft.max_length}{close}" if ft.max_length else f"sequence<{spec}{close}"), []
    if isinstance(ft, pt.bounded_str):
        return f"string<{ft.max_length}>", []
    if isclass(ft) and issubclass(ft, IDL_KINDS):
        return "::" + scoped_name(ft), []
    for k, v in IDL_PRIMITIVES.items():
        if ft == k:
            return v, []
    raise TypeError(f"no IDL for {ft!r}")


def idl_declarator(ft, name):
    spec, dims = idl_type(ft)
    return f"{spec} {name}" + "".join(f"[{d}]" for d in dims)


def idl_type_annotations(t):
    a = get_idl_annotations(t)
    out = []
    if issubclass(t, (IdlStruct, IdlUnion)):
        # explicit, so that libidl's default extensibility does not matter (Python's default: final)
        out.append("@" + a.get("extensibility", "final"))
        if a.get("autoid") == "hash":
            out.append("@autoid(HASH)")
    if a.get("nested"):
        out.append("@nested")
    if "bit_bound" in a:
        out.append(f"@bit_bound({a['bit_bound']})")
    return " ".join(out)


def idl_struct(t):
    hints = get_extended_type_hints(t)
    fann = get_idl_field_annotations(t)
    keylist = get_idl_annotations(t).get("keylist") or []
    base = t.__base__
    inherited = set(get_extended_type_hints(base)) if base is not IdlStruct else set()
    lines = [f"  {idl_type_annotations(t)} struct {t.__name__}"
             + (f" : ::{scoped_name(base)}" if base is not IdlStruct else "") + " {"]
    for name, ft in hints.items():
        if name in inherited:
            continue
        a = fann.get(name, {})
        ann = []
        if a.get("key") or name in keylist:
            ann.append("@key")
        if "id" in a:
            ann.append(f"@id({a['id']})")
        if "hash_id" in a:
            ann.append(f'@hashid("{a["hash_id"]}")' if a["hash_id"] else "@hashid")
        if a.get("must_understand"):
            ann.append("@must_understand")
        if a.get("external"):
            ann.append("@external")
        if isinstance(ft, WrapOpt):
            ann.append("@optional")
            ft = ft.inner
        lines.append("    " + " ".join(ann + [idl_declarator(ft, name)]) + ";")
    lines.append("  };")
    return "\n".join(lines)


def idl_label(disc, label):
    if isinstance(label, Enum):
        return label.name             # enumerators live in the enclosing module scope
    if disc is bool:
        return "TRUE" if label else "FALSE"
    if disc == pt.char:
        return repr(label) if label != "'" else "'\\''"
    return str(int(label))            # int() because case[1, ...] may come back as True (typing cache)


def idl_union(t):
    disc = t.__idl_discriminator__
    dspec, _ = idl_type(disc)
    lines = [f"  {idl_type_annotations(t)} union {t.__name__} switch ({dspec}) {{"]
    for name, ft in get_extended_type_hints(t).items():
        if isinstance(ft, pt.case):
            labels = " ".join(f"case {idl_label(disc, lab)}:" for lab in ft.labels)
        else:
            labels = "default:"
        lines.append(f"    {labels} {idl_declarator(ft.subtype, name)};")
    lines.append("  };")
    return "\n".join(lines)


def idl_enum(t):
    lits = list(t)
    sequential = [e.value for e in lits] == list(range(len(lits)))
    body = ", ".join((e.name if sequential else f"@value({e.value}) {e.name}") for e in lits)
    return "  " + " ".join(filter(None, [idl_type_annotations(t), f"enum {t.__name__} {{ {body} }};"]))


def idl_bitmask(t):
    pos = t.__idl_positions__
    names = list(get_extended_type_hints(t))
    sequential = [pos[n] for n in names] == list(range(len(names)))
    body = ", ".join((n if sequential else f"@position({pos[n]}) {n}") for n in names)
    return "  " + " ".join(filter(None, [idl_type_annotations(t), f"bitmask {t.__name__} {{ {body} }};"]))


def idl_document(types):
    modules = {t.__idl_typename__.rsplit(".", 1)[0] for t in types}
    assert len(modules) == 1 and "." not in next(iter(modules)), "one single-level module expected"
    gen = {"struct": idl_struct, "union": idl_union, "enum": idl_enum, "bitmask": idl_bitmask}
    # Python declaration order = dependencies first, which is what IDL needs
    body = "\n".join(gen[kind_of(t)](t) for t in types)
    return f"module {next(iter(modules))} {{\n{body}\n}};\n"


class _TypeinfoTypemap(ct.Structure):
    # idl_typeinfo_typemap_t (idl/processor.h, 11.0.1)
    _fields_ = [("typeinfo", ct.c_void_p), ("typeinfo_size", ct.c_size_t),
                ("typemap", ct.c_void_p), ("typemap_size", ct.c_size_t)]


IDL_FLAG_EXTENDED_DATA_TYPES, IDL_FLAG_ANONYMOUS_TYPES, IDL_FLAG_ANNOTATIONS = 1 << 2, 1 << 3, 1 << 4
PSTATE_DEFAULT_EXTENSIBILITY_OFFSET = 8   # idl_pstate_t.config.default_extensibility
PSTATE_TRACK_WARNING_OFFSET = 16          # idl_pstate_t.track_warning
PSTATE_ROOT_OFFSET = 88                   # idl_pstate_t.root (x86_64 layout, 11.0.1)


class Idlc:
    """generate_type_meta_ser from libcycloneddsidl: the code idlc uses for TYPE_INFO_CDR/TYPE_MAP_CDR."""

    def __init__(self, idl_text):
        from cyclonedds.internal import load_cyclonedds
        load_cyclonedds()   # libidl needs the wheel's libddsc (XTypes descriptors, serializer)
        libdir = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(cyclonedds.__file__))),
                              "cyclonedds.libs")
        paths = glob.glob(os.path.join(libdir, "libcycloneddsidl*"))
        if not paths:
            raise RuntimeError(f"libcycloneddsidl not found in {libdir}")
        lib = self.lib = ct.CDLL(paths[0])
        sigs = {
            "idl_create_pstate": ([ct.c_uint32, ct.c_void_p, ct.POINTER(ct.c_void_p)], ct.c_int32),
            "idl_parse_string": ([ct.c_void_p, ct.c_char_p], ct.c_int32),
            "idl_next": ([ct.c_void_p], ct.c_void_p),
            "idl_iterate": ([ct.c_void_p, ct.c_void_p], ct.c_void_p),
            "idl_identifier": ([ct.c_void_p], ct.c_char_p),
            "idl_is_module": ([ct.c_void_p], ct.c_bool),
            "idl_is_struct": ([ct.c_void_p], ct.c_bool),
            "idl_is_union": ([ct.c_void_p], ct.c_bool),
            "generate_type_meta_ser": ([ct.c_void_p, ct.c_void_p, ct.POINTER(_TypeinfoTypemap)], ct.c_int32),
            "idl_free": ([ct.c_void_p], None),
        }
        for fn, (argtypes, restype) in sigs.items():
            getattr(lib, fn).argtypes = argtypes
            getattr(lib, fn).restype = restype
        self.pstate = ct.c_void_p()
        # the flags idlc itself uses (idlc.c)
        flags = IDL_FLAG_EXTENDED_DATA_TYPES | IDL_FLAG_ANONYMOUS_TYPES | IDL_FLAG_ANNOTATIONS
        if lib.idl_create_pstate(flags, None, ct.byref(self.pstate)) != 0:
            raise RuntimeError("idl_create_pstate failed")
        ct.c_int.from_address(self.pstate.value + PSTATE_DEFAULT_EXTENSIBILITY_OFFSET).value = 0  # IDL_FINAL
        # idl_pstate_t.track_warning: return false = don't print (libidl warns about inheriting
        # from an appendable struct, which gen_vectors does on purpose)
        self._no_warnings = ct.CFUNCTYPE(ct.c_bool, ct.c_int)(lambda w: False)
        ct.c_void_p.from_address(self.pstate.value + PSTATE_TRACK_WARNING_OFFSET).value = \
            ct.cast(self._no_warnings, ct.c_void_p).value
        self._src = ct.create_string_buffer(idl_text.encode())   # libidl keeps pointers into it
        rc = lib.idl_parse_string(self.pstate, self._src)
        if rc != 0:
            raise RuntimeError(f"libidl could not parse the generated IDL (retcode {rc})")
        self.nodes = {}
        node = ct.c_void_p.from_address(self.pstate.value + PSTATE_ROOT_OFFSET).value
        while node:
            if lib.idl_is_module(node):
                mod = lib.idl_identifier(node).decode()
                child = lib.idl_iterate(node, None)
                while child:
                    if lib.idl_is_struct(child) or lib.idl_is_union(child):
                        self.nodes[f"{mod}::{lib.idl_identifier(child).decode()}"] = child
                    child = lib.idl_iterate(node, child)
            node = lib.idl_next(node)

    def type_meta(self, name):
        """(TypeInformation bytes, TypeMapping bytes) as idlc would embed them."""
        res = _TypeinfoTypemap()
        rc = self.lib.generate_type_meta_ser(self.pstate, self.nodes[name], ct.byref(res))
        if rc != 0:
            raise RuntimeError(f"generate_type_meta_ser({name}) failed: {rc}")
        ti = ct.string_at(res.typeinfo, res.typeinfo_size)
        tm = ct.string_at(res.typemap, res.typemap_size)
        self.lib.idl_free(res.typeinfo)
        self.lib.idl_free(res.typemap)
        return ti, tm


# ---------------------------------------------------------------------------------------------
# Generation
# ---------------------------------------------------------------------------------------------


def record_from(name, kind, ti_bytes, catalog):
    mb, cb = catalog.by_name[name]
    rec = {"type": name, "kind": kind,
           "minimal": side(mb, xt.EK_MINIMAL), "complete": side(cb, xt.EK_COMPLETE),
           "type_information": ti_bytes.hex() if ti_bytes is not None else None}
    deps = []
    if ti_bytes is not None:
        mdeps, cdeps = typeinfo_deps(ti_bytes)
        for tid in cdeps:       # the complete list gives the order (Python may repeat an entry)
            dname = catalog.by_id[tid]
            if any(d["type"] == dname for d in deps):
                continue
            dm, dc = catalog.by_name[dname]
            deps.append({"type": dname, "minimal": side(dm, xt.EK_MINIMAL), "complete": side(dc, xt.EK_COMPLETE)})
        # the minimal list is the complete list's minimal ids, duplicates dropped
        rec["complete_dependency_count"] = len(cdeps)
        expect = []
        for d in deps:
            m = bytes.fromhex(d["minimal"]["type_identifier"])
            if m not in expect:
                expect.append(m)
        assert mdeps == expect, f"{name}: minimal dependency list is not the deduplicated complete one"
    rec["dependencies"] = deps
    return rec


def compare_idlc(rec, idlc_ti, idlc_cat):
    """'same', or the fields where idlc's result differs from rec."""
    diff = {}
    if rec["type_information"] is not None and idlc_ti is not None and idlc_ti.hex() != rec["type_information"]:
        diff["type_information"] = idlc_ti.hex()
    names = [rec["type"]] + [d["type"] for d in rec["dependencies"]]
    for n in names:
        if n not in idlc_cat.by_name:
            diff[n] = "not produced by idlc"
            continue
        mb, cb = idlc_cat.by_name[n]
        ours = rec if n == rec["type"] else next(d for d in rec["dependencies"] if d["type"] == n)
        for k, b in (("minimal", mb), ("complete", cb)):
            if b.hex() != ours[k]["type_object"]:
                diff.setdefault(n, {})[k] = b.hex()
    return diff or "same"


def generate():
    types = declared_types()
    idlc = Idlc(idl_document(types))
    ccheck = CTypeChecks()

    # idlc: one catalog over all typemaps (enums/bitmasks only appear as dependencies)
    idlc_cat, idlc_ti = Catalog(), {}
    for t in types:
        if issubclass(t, (IdlStruct, IdlUnion)):
            ti, tm = idlc.type_meta(scoped_name(t))
            idlc_ti[scoped_name(t)] = ti
            idlc_cat.add_typemap(from_xcdr2(xt.TypeMapping, tm))

    py_cat = Catalog()
    out = []
    for t in types:
        name, kind = scoped_name(t), kind_of(t)
        try:
            ti = python_type_data(t, py_cat)
        except Exception as e:   # char-discriminated unions: the binding cannot build them
            # the binding chains one exception per nesting level, each with a dump of the value;
            # keep the outermost message and the innermost (actual) error
            inner = e
            while (inner.__cause__ or inner.__context__) is not None:
                inner = inner.__cause__ or inner.__context__
            msg = str(e).split(",")[0] + f" ({type(inner).__name__}: {inner})"
            # fall back to idlc's values so that every declared type has a record
            rec = record_from(name, kind, idlc_ti.get(name), idlc_cat)
            rec["source"] = "idlc"
            rec["python_error"] = f"{type(e).__name__}: {msg}"
        else:
            rec = record_from(name, kind, ti, py_cat)
            rec["source"] = "python"
        rec["c_library"] = None
        rec["idlc"] = compare_idlc(rec, idlc_ti.get(name), idlc_cat) if rec["source"] == "python" else "source"
        out.append(rec)

    # C checks, after all Python records exist: topics first (they load the types into C's type
    # library), then the TypeObjects, so that enums/bitmasks are found as dependencies.
    for t, rec in zip(types, out):
        if rec["source"] == "python" and rec["type_information"] is not None:
            rec["c_library"] = ccheck.topic_typeinfo(t, bytes.fromhex(rec["type_information"]))
    for rec in out:
        if rec["source"] != "python":
            continue
        ids = [bytes.fromhex(rec[k]["type_identifier"]) for k in ("minimal", "complete")]
        ids += [bytes.fromhex(d[k]["type_identifier"]) for d in rec["dependencies"] for k in ("minimal", "complete")]
        # enums/bitmasks have no topic of their own: their TypeObjects are in C's type library
        # because some struct's topic depends on them
        rec["c_library"] = {**(rec["c_library"] or {}), **ccheck.type_objects(ids, py_cat)}
    return out


def summary(records):
    lines = []
    for r in records:
        c = r["c_library"]
        cs = "-" if c is None else ("ok" if c.get("topic_created", True) and
                                    all(v == "same" for k, v in c.items() if k != "topic_created") else "DIFF")
        ids = "ok" if r["idlc"] in ("same", "source") else "DIFF " + ",".join(sorted(r["idlc"]))
        lines.append(f"  {r['type']:<20} {r['kind']:<8} src={r['source']:<6} C={cs:<4} idlc={ids}")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="compare with typeobjects.json, don't write")
    ap.add_argument("--stdout", action="store_true", help="print JSON instead of writing typeobjects.json")
    ap.add_argument("--idl", action="store_true", help="print the IDL given to libidl and exit")
    args = ap.parse_args()

    if args.idl:
        sys.stdout.write(idl_document(declared_types()))
        return
    records = generate()
    text = json.dumps(records, indent=1) + "\n"
    from importlib.metadata import version
    print(f"cyclonedds {version('cyclonedds')}: {len(records)} types", file=sys.stderr)
    print(summary(records), file=sys.stderr)

    path = os.path.join(HERE, "typeobjects.json")
    if args.stdout:
        sys.stdout.write(text)
    elif args.check:
        with open(path, encoding="utf-8") as f:
            if f.read() != text:
                print("typeobjects.json differs from freshly generated output", file=sys.stderr)
                sys.exit(1)
        print("typeobjects.json is up to date", file=sys.stderr)
    else:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        print(f"wrote {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
