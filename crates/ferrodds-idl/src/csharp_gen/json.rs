//! The JSON view in C# output: a `_Json` static partial class per namespace beside `_Cdr`,
//! with `Write_T(JsonWriter, T)` and `T Read_T(JsonReader)` for each struct, union and
//! enum, calling `bindings/csharp/FerroDDS/Json.cs`. The text is `ferrodds-cdr`'s JSON view
//! (docs/serialization.md), so that what C# writes the native side reads and the reverse.
//!
//! Members are looked up by name in any order, unknown ones skipped and absent optionals
//! null, as `DynamicValue::from_json` reads; a member named twice keeps its last value.

use super::{
    bitmask_holder, guarded, primitive, qualified, string_literal, Code, Field, Generator, Ty,
};
use crate::ast::*;
use crate::error::Error;

/// The `_Json` class of the namespace `name` is in.
pub(super) fn json_class(name: &ScopedName) -> String {
    let mut parts: Vec<String> = name.scope().iter().map(|p| super::ident(p)).collect();
    parts.push("_Json".into());
    format!("global::{}", parts.join("."))
}

/// A C# string literal of the JSON text of the string `s` (a member name or enumerator:
/// IDL identifiers, which JSON needs no escape for), quoted, with `before` and `after`.
fn quoted(before: &str, s: &str, after: &str) -> String {
    string_literal(&format!("{before}\"{s}\"{after}"))
}

/// The generated `_Json` method `what_T` of the enum, struct or union `ty`.
fn generated(ty: &Ty<'_>, what: &str) -> String {
    let name = match ty {
        Ty::Enum(e) => &e.name,
        Ty::Struct(s) => &s.name,
        Ty::Union(u) => &u.name,
        _ => return String::new(),
    };
    format!("{}.{what}_{}", json_class(name), name.name())
}

/// Bit `i` of a set of flags kept in `ulong`s named `<prefix>0`, `<prefix>1`...
fn bit(prefix: &str, i: usize) -> (String, String) {
    (
        format!("{prefix}{}", i / 64),
        format!("0x{:x}UL", 1u64 << (i % 64)),
    )
}

impl<'s> Generator<'s> {
    /// The members of `s`'s whole chain, base structs' first: the JSON object holds them all.
    fn chain_fields(&self, s: &'s Struct) -> Result<Vec<Field<'s>>, Error> {
        let mut all = Vec::new();
        for st in self.chain(s)? {
            all.extend(self.fields(st)?);
        }
        Ok(all)
    }

    /// `Write_S`, `WriteMembers_S` and `Read_S` of the JSON view.
    pub(super) fn struct_json(&self, s: &'s Struct) -> Result<String, Error> {
        let fields = self.fields(s)?;
        let all = self.chain_fields(s)?;
        let inherited = all.len() - fields.len();
        let ty = qualified(&s.name);
        let name = s.name.name();
        let mut c = Code::default();

        c.open(format!(
            "public static void Write_{name}(global::FerroDDS.JsonWriter w, {ty} v)"
        ));
        c.line("if (v == null) throw global::FerroDDS.JsonException.Null();");
        c.line("w.Raw('{');");
        c.line(format!("WriteMembers_{name}(w, v);"));
        c.line("w.Raw('}');");
        c.close();
        c.line("");
        c.open(format!(
            "public static void WriteMembers_{name}(global::FerroDDS.JsonWriter w, {ty} v)"
        ));
        c.line("string m = null;");
        guarded(&s.name, "JsonException", &mut c, |c| {
            if let Some(base) = &s.base {
                c.line(format!(
                    "{}.WriteMembers_{}(w, v);",
                    json_class(base),
                    base.name()
                ));
            }
            for (k, f) in fields.iter().enumerate() {
                let m = f.member;
                let comma = if inherited + k == 0 { "" } else { "," };
                c.line(format!("m = {};", string_literal(&m.name)));
                c.line(format!("w.Raw({});", quoted(comma, &m.name, ":")));
                let field = format!("v.{}", f.name);
                if m.optional {
                    c.line(format!("if ({field} == null) w.WriteNull();"));
                    c.open("else");
                    let value = if f.ty.is_value_type() {
                        format!("{field}.Value")
                    } else {
                        field
                    };
                    self.write_json(&f.ty, &value, 0, c);
                    c.close();
                } else {
                    self.write_json(&f.ty, &field, 0, c);
                }
            }
        });
        c.close();
        c.line("");

        c.open(format!(
            "public static {ty} Read_{name}(global::FerroDDS.JsonReader r, {ty} into)"
        ));
        c.line(format!("{ty} v = into ?? new {ty}();"));
        c.line("string m = null;");
        guarded(&s.name, "JsonException", &mut c, |c| {
            for k in 0..all.len().div_ceil(64) {
                c.line(format!("ulong seen{k} = 0;"));
            }
            c.line("int members = 0;");
            c.line("r.BeginObject();");
            c.open("while (r.NextMember(ref members))");
            for (i, f) in all.iter().enumerate() {
                let (word, mask) = bit("seen", i);
                let head = if i == 0 { "if" } else { "else if" };
                c.open(format!("{head} (r.Is({}))", string_literal(&f.member.name)));
                c.line(format!("m = {};", string_literal(&f.member.name)));
                c.line(format!("{word} |= {mask};"));
                self.read_member_json(f, c);
                c.close();
            }
            if all.is_empty() {
                c.line("r.SkipValue();");
            } else {
                c.line("else r.SkipValue();");
            }
            c.line("m = null;");
            c.close();
            // Absent optionals are null (the sample may be one read before).
            for (i, f) in all.iter().enumerate() {
                let (word, mask) = bit("seen", i);
                c.open(format!("if (({word} & {mask}) == 0)"));
                if f.member.optional {
                    c.line(format!("v.{} = null;", f.name));
                } else {
                    c.line(format!("m = {};", string_literal(&f.member.name)));
                    c.line("throw r.Missing();");
                }
                c.close();
            }
        });
        c.line("return v;");
        c.close();
        Ok(c.text)
    }

    /// Reads member `f` of `v` (null for an absent optional), into what it holds.
    fn read_member_json(&self, f: &Field<'_>, c: &mut Code) {
        let target = format!("v.{}", f.name);
        if f.member.optional {
            c.line(format!("if (r.IsNull()) {target} = null;"));
            c.open("else");
            self.read_json(&f.ty, &target, 0, true, c);
            c.close();
        } else {
            self.read_json(&f.ty, &target, 0, true, c);
        }
    }

    /// `Write_U` and `Read_U` of the JSON view: `{"discriminator": d, "<branch>": v}`, the
    /// branch left out when no case selects one.
    pub(super) fn union_json(&self, u: &'s Union, disc: &Ty<'_>, branches: &[Ty<'_>]) -> String {
        let ty = qualified(&u.name);
        let name = u.name.name();
        let mut c = Code::default();
        c.open(format!(
            "public static void Write_{name}(global::FerroDDS.JsonWriter w, {ty} v)"
        ));
        c.line("if (v == null) throw global::FerroDDS.JsonException.Null();");
        c.line("string m = \"discriminator\";");
        guarded(&u.name, "JsonException", &mut c, |c| {
            c.line(format!("w.Raw({});", quoted("{", "discriminator", ":")));
            self.write_json(disc, "v._d", 0, c);
            c.open(format!("switch ({ty}._Branch(v._d))"));
            for (k, (case, b)) in u.cases.iter().zip(branches).enumerate() {
                c.line(format!("case {k}:"));
                c.open("");
                c.line(format!("m = {};", string_literal(&case.member.name)));
                c.line(format!("w.Raw({});", quoted(",", &case.member.name, ":")));
                self.write_json(b, &format!("v._{k}"), 0, c);
                c.line("break;");
                c.close();
            }
            c.close();
            c.line("w.Raw('}');");
        });
        c.close();
        c.line("");
        c.open(format!(
            "public static {ty} Read_{name}(global::FerroDDS.JsonReader r, {ty} into)"
        ));
        c.line(format!("{ty} v = into ?? new {ty}();"));
        c.line("string m = null;");
        guarded(&u.name, "JsonException", &mut c, |c| {
            c.line("bool discriminated = false;");
            for k in 0..branches.len().div_ceil(64) {
                c.line(format!("ulong seen{k} = 0;"));
            }
            c.line("int members = 0;");
            c.line("r.BeginObject();");
            c.open("while (r.NextMember(ref members))");
            c.open("if (r.Is(\"discriminator\"))");
            c.line("m = \"discriminator\";");
            self.read_json(disc, "v._d", 0, false, c);
            c.line("discriminated = true;");
            c.close();
            for (k, (case, b)) in u.cases.iter().zip(branches).enumerate() {
                let (word, mask) = bit("seen", k);
                c.open(format!(
                    "else if (r.Is({}))",
                    string_literal(&case.member.name)
                ));
                c.line(format!("m = {};", string_literal(&case.member.name)));
                self.read_json(b, &format!("v._{k}"), 0, true, c);
                c.line(format!("{word} |= {mask};"));
                c.close();
            }
            c.line("else r.SkipValue();");
            c.line("m = null;");
            c.close();
            c.line("m = \"discriminator\";");
            c.line("if (!discriminated) throw r.Missing();");
            c.open(format!("switch ({ty}._Branch(v._d))"));
            for (k, case) in u.cases.iter().enumerate() {
                let (word, mask) = bit("seen", k);
                c.line(format!("case {k}:"));
                c.line(format!("    m = {};", string_literal(&case.member.name)));
                c.line(format!(
                    "    if (({word} & {mask}) == 0) throw r.Missing();"
                ));
                c.line("    break;");
            }
            c.close();
        });
        c.line("return v;");
        c.close();
        c.text
    }

    /// `Write_E` and `Read_E` of the JSON view: enumerators by name.
    pub(super) fn enum_json(&self, e: &Enum) -> String {
        let ty = qualified(&e.name);
        let name = e.name.name();
        let idl_name = string_literal(&e.name.to_string());
        // The first enumerator of each value names it, as ferrodds-cdr writes it.
        let mut named: Vec<&Enumerator> = Vec::new();
        for x in &e.enumerators {
            if !named.iter().any(|n| n.value == x.value) {
                named.push(x);
            }
        }
        let names: Vec<&str> = e.enumerators.iter().map(|x| x.name.as_str()).collect();
        let expected = string_literal(&format!("one of {}", names.join(", ")));
        let mut c = Code::default();
        c.open(format!(
            "public static void Write_{name}(global::FerroDDS.JsonWriter w, {ty} v)"
        ));
        c.open("switch ((int)v)");
        for x in &named {
            c.line(format!(
                "case {}: w.Raw({}); return;",
                x.value,
                quoted("", &x.name, "")
            ));
        }
        c.line("default:");
        c.line(format!(
            "    throw new global::FerroDDS.JsonException(\"value \" + (int)v + \" is no enumerator of \" + {idl_name});"
        ));
        c.close();
        c.close();
        c.line("");
        c.open(format!(
            "public static {ty} Read_{name}(global::FerroDDS.JsonReader r)"
        ));
        c.line(format!("r.ReadToken({expected});"));
        for x in &e.enumerators {
            c.line(format!(
                "if (r.Is({})) return ({ty})({});",
                string_literal(&x.name),
                x.value
            ));
        }
        c.line(format!("throw r.Expected({expected});"));
        c.close();
        c.text
    }

    /// Statements that write `expr` of `ty` as JSON; `level` numbers the locals of nested
    /// collections.
    fn write_json(&self, ty: &Ty<'_>, expr: &str, level: usize, c: &mut Code) {
        match ty {
            Ty::Prim(p) => {
                let method = match p {
                    Primitive::Boolean => "WriteBool",
                    Primitive::Char | Primitive::WChar => "WriteChar",
                    Primitive::Int8 | Primitive::Int16 | Primitive::Int32 | Primitive::Int64 => {
                        "WriteInt64"
                    }
                    Primitive::Float => "WriteSingle",
                    Primitive::Double => "WriteDouble",
                    _ => "WriteUInt64",
                };
                c.line(format!("w.{method}({expr});"));
            }
            Ty::Str(_) | Ty::WStr(_) => c.line(format!("w.WriteString({expr});")),
            Ty::Bitmask(_) => c.line(format!("w.WriteUInt64((ulong){expr});")),
            Ty::Enum(_) | Ty::Struct(_) | Ty::Union(_) => {
                c.line(format!("{}(w, {expr});", generated(ty, "Write")));
            }
            _ if ty.is_octets() => c.line(format!("w.WriteOctets({expr});")),
            Ty::Seq(e, _) => {
                let (s, i) = (format!("s{level}"), format!("i{level}"));
                c.open("");
                c.line(format!("{} {s} = {expr};", self.cs(ty)));
                c.line(format!(
                    "if ({s} == null) throw global::FerroDDS.JsonException.Null();"
                ));
                c.line("w.Raw('[');");
                c.open(format!("for (int {i} = 0; {i} < {s}.Count; {i}++)"));
                c.line(format!("if ({i} > 0) w.Raw(',');"));
                self.write_json(e, &format!("{s}[{i}]"), level + 1, c);
                c.close();
                c.line("w.Raw(']');");
                c.close();
            }
            Ty::Array(e, dims) => {
                let a = format!("a{level}");
                c.open("");
                c.line(format!("{} {a} = {expr};", self.cs(ty)));
                for (k, n) in dims.iter().enumerate() {
                    c.line(format!("w.CheckArray({a}, {k}, {n});"));
                }
                let index: Vec<String> = (0..dims.len()).map(|k| format!("i{level}_{k}")).collect();
                for (k, n) in dims.iter().enumerate() {
                    let i = &index[k];
                    c.line("w.Raw('[');");
                    c.open(format!("for (int {i} = 0; {i} < {n}; {i}++)"));
                    c.line(format!("if ({i} > 0) w.Raw(',');"));
                }
                self.write_json(e, &format!("{a}[{}]", index.join(", ")), level + 1, c);
                for _ in dims {
                    c.close();
                    c.line("w.Raw(']');");
                }
                c.close();
            }
        }
    }

    /// Statements that read a value of `ty` from JSON into `target`. `reuse`: `target`
    /// holds a value of the type or null, whose objects, lists and arrays are filled in
    /// place (a sample read before, read into again, allocates only its strings).
    fn read_json(&self, ty: &Ty<'_>, target: &str, level: usize, reuse: bool, c: &mut Code) {
        let into = if reuse { target } else { "null" };
        match ty {
            Ty::Prim(p) => {
                let (cs, _) = primitive(*p);
                let call = match p {
                    Primitive::Boolean => "r.ReadBool()".to_owned(),
                    Primitive::Char | Primitive::WChar => "r.ReadChar()".to_owned(),
                    Primitive::Float => "r.ReadSingle()".to_owned(),
                    Primitive::Double => "r.ReadDouble()".to_owned(),
                    Primitive::Int8 | Primitive::Int16 | Primitive::Int32 | Primitive::Int64 => {
                        format!("({cs})r.ReadInt64({cs}.MinValue, {cs}.MaxValue)")
                    }
                    _ => format!("({cs})r.ReadUInt64({cs}.MaxValue)"),
                };
                c.line(format!("{target} = {call};"));
            }
            Ty::Str(_) | Ty::WStr(_) => c.line(format!("{target} = r.ReadString();")),
            Ty::Bitmask(b) => {
                let (_, holder, _) = bitmask_holder(b);
                c.line(format!(
                    "{target} = ({})r.ReadUInt64({holder}.MaxValue);",
                    qualified(&b.name)
                ));
            }
            Ty::Enum(_) => c.line(format!("{target} = {}(r);", generated(ty, "Read"))),
            Ty::Struct(_) | Ty::Union(_) => {
                c.line(format!("{target} = {}(r, {into});", generated(ty, "Read")));
            }
            _ if ty.is_octets() => c.line(format!("{target} = r.ReadOctets({into});")),
            Ty::Seq(e, _) => {
                let (s, n, el) = (
                    format!("s{level}"),
                    format!("n{level}"),
                    format!("e{level}"),
                );
                let cs = self.cs(ty);
                c.open("");
                if reuse {
                    c.line(format!("{cs} {s} = {target} ?? new {cs}();"));
                    c.line(format!("{s}.Clear();"));
                } else {
                    c.line(format!("{cs} {s} = new {cs}();"));
                }
                c.line(format!("int {n} = 0;"));
                c.line("r.BeginArray();");
                c.open(format!("while (r.NextElement(ref {n}))"));
                c.line(format!("{} {el};", self.cs(e)));
                self.read_json(e, &el, level + 1, false, c);
                c.line(format!("{s}.Add({el});"));
                c.close();
                c.line(format!("{target} = {s};"));
                c.close();
            }
            Ty::Array(e, dims) => {
                let a = format!("a{level}");
                c.open("");
                let fresh = self.new_array(e, dims);
                if reuse {
                    // The array held, when it has the dimensions; its elements read into.
                    let fits: Vec<String> = (0..dims.len())
                        .map(|k| format!("{target}.GetLength({k}) == {}", dims[k]))
                        .collect();
                    c.line(format!(
                        "{} {a} = {target} != null && {} ? {target} : {fresh};",
                        self.cs(ty),
                        fits.join(" && ")
                    ));
                } else {
                    c.line(format!("{} {a} = {fresh};", self.cs(ty)));
                }
                let index: Vec<String> = (0..dims.len()).map(|k| format!("i{level}_{k}")).collect();
                for (k, n) in dims.iter().enumerate() {
                    let i = &index[k];
                    c.line("r.BeginArray();");
                    c.open(format!("for (int {i} = 0; {i} < {n}; {i}++)"));
                    c.line(format!("r.Element({i}, {n});"));
                }
                let element = format!("{a}[{}]", index.join(", "));
                self.read_json(e, &element, level + 1, reuse, c);
                for n in dims.iter().rev() {
                    c.close();
                    c.line(format!("r.EndArray({n});"));
                }
                c.line(format!("{target} = {a};"));
                c.close();
            }
        }
    }
}
