//! A runtime type written out as IDL: what `ferrodds typeof` prints for a topic whose type
//! came over TypeLookup, and what a user copies into an IDL file to compile.
//!
//! Every named type the type depends on is declared first (enums, bitmasks, structs,
//! unions, each once), inside the modules its scoped name gives (`a::b::C` in `module a {
//! module b { ... }; };`, a module reopened where the order needs it). Extensibility is
//! always written (`@final`, `@appendable`, `@mutable`), since IDL compilers disagree on
//! the default; `@id` only where the members' ids are not the ones IDL would give them in
//! order. A sequence of arrays, which IDL cannot write inline, gets a typedef.

use std::collections::HashSet;
use std::fmt::Write;

use super::{BitmaskType, DynamicType, EnumType, Member, StructType, UnionType};
use crate::Extensibility;

/// The IDL declaring `ty` and every named type it depends on, dependencies first.
pub fn to_idl(ty: &DynamicType) -> String {
    let mut w = Writer::default();
    w.visit(ty);
    w.close_to(&[]);
    w.out
}

/// One declaration to write.
enum Decl<'a> {
    Enum(&'a EnumType),
    Bitmask(&'a BitmaskType),
    Struct(&'a StructType),
    Union(&'a UnionType),
    /// `typedef element name[dims]`, for a sequence of arrays.
    ArrayTypedef {
        name: String,
        element: &'a DynamicType,
        dimensions: &'a [usize],
    },
}

#[derive(Default)]
struct Writer {
    out: String,
    /// Named types declared (or being declared) so far.
    seen: HashSet<String>,
    /// The modules open now, outermost first.
    open: Vec<String>,
    /// The typedefs made for sequences of arrays, by element type and dimensions.
    array_typedefs: Vec<(DynamicType, Vec<usize>, String)>,
}

/// `a::b::C` → (["a", "b"], "C").
fn split_scope(name: &str) -> (Vec<&str>, &str) {
    let mut parts: Vec<&str> = name.split("::").filter(|p| !p.is_empty()).collect();
    let local = parts.pop().unwrap_or(name);
    (parts, local)
}

impl Writer {
    fn visit(&mut self, ty: &DynamicType) {
        match ty {
            DynamicType::Enum(e) if self.seen.insert(e.name.clone()) => {
                self.declare(Decl::Enum(e));
            }
            DynamicType::Bitmask(b) if self.seen.insert(b.name.clone()) => {
                self.declare(Decl::Bitmask(b));
            }
            DynamicType::Struct(s) => self.visit_struct(s),
            DynamicType::Union(u) if self.seen.insert(u.name.clone()) => {
                self.visit(&u.discriminator);
                for case in &u.cases {
                    self.visit(&case.ty);
                }
                self.declare(Decl::Union(u));
            }
            DynamicType::Sequence { element, .. } => {
                self.visit(element);
                if let DynamicType::Array {
                    element,
                    dimensions,
                } = &**element
                {
                    self.array_typedef(element, dimensions);
                }
            }
            DynamicType::Array { element, .. } => self.visit(element),
            _ => {}
        }
    }

    fn visit_struct(&mut self, s: &StructType) {
        if !self.seen.insert(s.name.clone()) {
            return;
        }
        if let Some(base) = &s.base {
            self.visit_struct(base);
        }
        for m in &s.members {
            self.visit(&m.ty);
        }
        self.declare(Decl::Struct(s));
    }

    /// The typedef a sequence of this array refers to, declared at the top level.
    fn array_typedef(&mut self, element: &DynamicType, dimensions: &[usize]) {
        if self.typedef_name(element, dimensions).is_some() {
            return;
        }
        let name = format!("array_typedef_{}", self.array_typedefs.len() + 1);
        self.array_typedefs
            .push((element.clone(), dimensions.to_vec(), name.clone()));
        self.declare(Decl::ArrayTypedef {
            name,
            element,
            dimensions,
        });
    }

    fn typedef_name(&self, element: &DynamicType, dimensions: &[usize]) -> Option<&str> {
        self.array_typedefs
            .iter()
            .find(|(e, d, _)| e == element && d == dimensions)
            .map(|(_, _, n)| n.as_str())
    }

    /// Closes the modules open beyond `scope`'s common prefix and opens the rest of it.
    fn enter(&mut self, scope: &[&str]) {
        let common = self
            .open
            .iter()
            .zip(scope)
            .take_while(|(a, b)| a == *b)
            .count();
        self.close_to(&scope[..common]);
        for m in &scope[common..] {
            let indent = self.indent();
            let _ = writeln!(self.out, "{indent}module {m} {{");
            self.open.push((*m).to_owned());
        }
    }

    fn close_to(&mut self, keep: &[&str]) {
        while self.open.len() > keep.len() {
            self.open.pop();
            let indent = self.indent();
            let _ = writeln!(self.out, "{indent}}};");
        }
    }

    fn indent(&self) -> String {
        "    ".repeat(self.open.len())
    }

    fn declare(&mut self, decl: Decl<'_>) {
        let name = match &decl {
            Decl::Enum(e) => e.name.as_str(),
            Decl::Bitmask(b) => &b.name,
            Decl::Struct(s) => &s.name,
            Decl::Union(u) => &u.name,
            Decl::ArrayTypedef { name, .. } => name,
        };
        let (scope, local) = split_scope(name);
        let local = local.to_owned();
        self.enter(&scope);
        let i = self.indent();
        let mut text = String::new();
        let t = &mut text;
        match decl {
            Decl::Enum(e) => {
                if e.bit_bound != 32 {
                    let _ = writeln!(t, "{i}@bit_bound({})", e.bit_bound);
                }
                let _ = writeln!(t, "{i}enum {local} {{");
                let mut next = 0i64;
                for (n, (name, value)) in e.enumerators.iter().enumerate() {
                    let value_note = if i64::from(*value) != next {
                        format!("@value({value}) ")
                    } else {
                        String::new()
                    };
                    let comma = if n + 1 < e.enumerators.len() { "," } else { "" };
                    let _ = writeln!(t, "{i}    {value_note}{name}{comma}");
                    next = i64::from(*value) + 1;
                }
                let _ = writeln!(t, "{i}}};");
            }
            Decl::Bitmask(b) => {
                if b.bit_bound != 32 {
                    let _ = writeln!(t, "{i}@bit_bound({})", b.bit_bound);
                }
                let _ = writeln!(t, "{i}bitmask {local} {{");
                for (n, (name, position)) in b.flags.iter().enumerate() {
                    let comma = if n + 1 < b.flags.len() { "," } else { "" };
                    let _ = writeln!(t, "{i}    @position({position}) {name}{comma}");
                }
                let _ = writeln!(t, "{i}}};");
            }
            Decl::Struct(s) => {
                let _ = writeln!(t, "{i}{}", extensibility(s.extensibility));
                let base = match &s.base {
                    Some(b) => format!(" : {}", self.reference(&b.name, &scope)),
                    None => String::new(),
                };
                let _ = writeln!(t, "{i}struct {local}{base} {{");
                let first_id = s.base.as_ref().map_or(0, |b| b.member_count() as u32);
                // IDL numbers members in order by default (`@autoid(SEQUENTIAL)`), mutable
                // ones too; writing `@id` only where that differs also keeps clear of
                // Cyclone DDS 0.10's idlc, which reads `@id` after a member named `id` as
                // that member and rejects it.
                let write_ids = s
                    .members
                    .iter()
                    .enumerate()
                    .any(|(n, m)| m.id != first_id + n as u32);
                for m in &s.members {
                    let _ = writeln!(t, "{i}    {}", self.member(m, write_ids, &scope));
                }
                let _ = writeln!(t, "{i}}};");
            }
            Decl::Union(u) => {
                let _ = writeln!(t, "{i}{}", extensibility(u.extensibility));
                let _ = writeln!(
                    t,
                    "{i}union {local} switch ({}) {{",
                    self.type_expr(&u.discriminator, &scope)
                );
                for case in &u.cases {
                    for label in &case.labels {
                        let _ =
                            writeln!(t, "{i}    case {}:", label_expr(&u.discriminator, *label));
                    }
                    if case.default {
                        let _ = writeln!(t, "{i}    default:");
                    }
                    let _ = writeln!(
                        t,
                        "{i}        {};",
                        self.declarator(&case.ty, &case.name, &scope)
                    );
                }
                let _ = writeln!(t, "{i}}};");
            }
            Decl::ArrayTypedef {
                element,
                dimensions,
                ..
            } => {
                let dims: String = dimensions.iter().map(|d| format!("[{d}]")).collect();
                let _ = writeln!(
                    t,
                    "{i}typedef {} {local}{dims};",
                    self.type_expr(element, &scope)
                );
            }
        }
        self.out.push_str(&text);
    }

    fn member(&self, m: &Member, write_id: bool, scope: &[&str]) -> String {
        let mut s = String::new();
        if write_id {
            let _ = write!(s, "@id({}) ", m.id);
        }
        if m.key {
            s.push_str("@key ");
        }
        if m.optional {
            s.push_str("@optional ");
        }
        if m.must_understand && !m.key {
            s.push_str("@must_understand ");
        }
        let _ = write!(s, "{};", self.declarator(&m.ty, &m.name, scope));
        s
    }

    /// `type name` or, for an array, `element name[d0][d1]`.
    fn declarator(&self, ty: &DynamicType, name: &str, scope: &[&str]) -> String {
        match ty {
            DynamicType::Array {
                element,
                dimensions,
            } => {
                let dims: String = dimensions.iter().map(|d| format!("[{d}]")).collect();
                format!("{} {name}{dims}", self.type_expr(element, scope))
            }
            _ => format!("{} {name}", self.type_expr(ty, scope)),
        }
    }

    fn type_expr(&self, ty: &DynamicType, scope: &[&str]) -> String {
        match ty {
            DynamicType::Bool => "boolean".into(),
            DynamicType::UInt8 => "uint8".into(),
            DynamicType::Octet => "octet".into(),
            DynamicType::Int8 => "int8".into(),
            DynamicType::Char => "char".into(),
            DynamicType::WChar => "wchar".into(),
            DynamicType::Int16 => "short".into(),
            DynamicType::UInt16 => "unsigned short".into(),
            DynamicType::Int32 => "long".into(),
            DynamicType::UInt32 => "unsigned long".into(),
            DynamicType::Int64 => "long long".into(),
            DynamicType::UInt64 => "unsigned long long".into(),
            DynamicType::Float32 => "float".into(),
            DynamicType::Float64 => "double".into(),
            DynamicType::String { bound: None } => "string".into(),
            DynamicType::String { bound: Some(b) } => format!("string<{b}>"),
            DynamicType::WString => "wstring".into(),
            DynamicType::Enum(e) => self.reference(&e.name, scope),
            DynamicType::Bitmask(b) => self.reference(&b.name, scope),
            DynamicType::Struct(s) => self.reference(&s.name, scope),
            DynamicType::Union(u) => self.reference(&u.name, scope),
            DynamicType::Sequence { element, bound } => {
                let element = match &**element {
                    DynamicType::Array {
                        element,
                        dimensions,
                    } => self
                        .typedef_name(element, dimensions)
                        .map_or_else(|| "octet".to_owned(), |n| n.to_owned()),
                    other => self.type_expr(other, scope),
                };
                match bound {
                    Some(b) => format!("sequence<{element}, {b}>"),
                    None => format!("sequence<{element}>"),
                }
            }
            // Arrays are written by their declarator; one nested elsewhere is not a type
            // a runtime type holds (arrays keep every dimension in one).
            DynamicType::Array {
                element,
                dimensions,
            } => {
                let dims: String = dimensions.iter().map(|d| format!("[{d}]")).collect();
                format!("{}{dims}", self.type_expr(element, scope))
            }
        }
    }

    /// A named type as written from inside `scope`: its local name when it is declared in
    /// that very module, else its whole scoped name from the root.
    fn reference(&self, name: &str, scope: &[&str]) -> String {
        let (its_scope, local) = split_scope(name);
        if its_scope == scope {
            local.to_owned()
        } else if its_scope.is_empty() {
            format!("::{local}")
        } else {
            format!("::{}", name.trim_start_matches("::"))
        }
    }
}

fn extensibility(e: Extensibility) -> &'static str {
    match e {
        Extensibility::Final => "@final",
        Extensibility::Appendable => "@appendable",
        Extensibility::Mutable => "@mutable",
    }
}

/// A case label for a discriminator of type `ty`.
fn label_expr(ty: &DynamicType, value: i64) -> String {
    match ty {
        DynamicType::Bool => if value != 0 { "TRUE" } else { "FALSE" }.into(),
        DynamicType::Enum(e) => e
            .enumerators
            .iter()
            .find(|(_, v)| i64::from(*v) == value)
            .map_or_else(
                || value.to_string(),
                |(n, _)| {
                    let (scope, _) = split_scope(&e.name);
                    scope
                        .iter()
                        .map(|s| format!("::{s}"))
                        .chain(std::iter::once(format!("::{n}")))
                        .collect()
                },
            ),
        DynamicType::Char => match u8::try_from(value) {
            Ok(c) if c.is_ascii_graphic() && c != b'\'' && c != b'\\' => {
                format!("'{}'", char::from(c))
            }
            Ok(c) => format!("'\\x{c:02x}'"),
            Err(_) => value.to_string(),
        },
        _ => value.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::dynamic::UnionCase;

    fn shape() -> DynamicType {
        DynamicType::Struct(Arc::new(StructType {
            name: "ShapeType".into(),
            extensibility: Extensibility::Appendable,
            base: None,
            members: vec![
                Member::new("color", 0, DynamicType::String { bound: Some(128) }).key(),
                Member::new("x", 1, DynamicType::Int32),
                Member::new("y", 2, DynamicType::Int32),
                Member::new("shapesize", 3, DynamicType::Int32),
            ],
        }))
    }

    #[test]
    fn the_shape_type_is_written_as_the_interoperability_suite_declares_it() {
        assert_eq!(
            to_idl(&shape()),
            "@appendable\n\
             struct ShapeType {\n    \
                 @key string<128> color;\n    \
                 long x;\n    \
                 long y;\n    \
                 long shapesize;\n\
             };\n"
        );
    }

    #[test]
    fn dependencies_come_first_inside_their_modules_each_once() {
        let color = Arc::new(EnumType {
            name: "demo::Color".into(),
            bit_bound: 8,
            enumerators: vec![("RED".into(), 0), ("GREEN".into(), 1), ("BLUE".into(), 7)],
        });
        let point = Arc::new(StructType {
            name: "geo::Point".into(),
            extensibility: Extensibility::Final,
            base: None,
            members: vec![
                Member::new("x", 0, DynamicType::Float64),
                Member::new("y", 1, DynamicType::Float64),
            ],
        });
        let choice = Arc::new(UnionType {
            name: "demo::Choice".into(),
            extensibility: Extensibility::Final,
            discriminator: DynamicType::Enum(Arc::clone(&color)),
            cases: vec![
                UnionCase {
                    name: "where".into(),
                    labels: vec![0, 1],
                    default: false,
                    ty: DynamicType::Struct(Arc::clone(&point)),
                },
                UnionCase {
                    name: "note".into(),
                    labels: vec![],
                    default: true,
                    ty: DynamicType::String { bound: None },
                },
            ],
            no_member: vec![],
            default_discriminator: None,
        });
        let top = DynamicType::Struct(Arc::new(StructType {
            name: "demo::Top".into(),
            extensibility: Extensibility::Mutable,
            base: None,
            members: vec![
                Member::new("id", 10, DynamicType::UInt32).key(),
                Member::new("color", 11, DynamicType::Enum(Arc::clone(&color))),
                Member::new("choice", 12, DynamicType::Union(choice)),
                Member::new(
                    "path",
                    13,
                    DynamicType::Sequence {
                        element: Box::new(DynamicType::Struct(Arc::clone(&point))),
                        bound: Some(16),
                    },
                )
                .optional(),
                Member::new(
                    "grid",
                    14,
                    DynamicType::Array {
                        element: Box::new(DynamicType::Int16),
                        dimensions: vec![2, 3],
                    },
                ),
            ],
        }));
        let idl = to_idl(&top);
        let expected = "\
module demo {
    @bit_bound(8)
    enum Color {
        RED,
        GREEN,
        @value(7) BLUE
    };
};
module geo {
    @final
    struct Point {
        double x;
        double y;
    };
};
module demo {
    @final
    union Choice switch (Color) {
        case ::demo::RED:
        case ::demo::GREEN:
            ::geo::Point where;
        default:
            string note;
    };
    @mutable
    struct Top {
        @id(10) @key unsigned long id;
        @id(11) Color color;
        @id(12) Choice choice;
        @id(13) @optional sequence<::geo::Point, 16> path;
        @id(14) short grid[2][3];
    };
};
";
        assert_eq!(idl, expected, "\n{idl}");
    }

    #[test]
    fn a_sequence_of_arrays_gets_a_typedef_and_a_base_comes_before_its_child() {
        let base = Arc::new(StructType {
            name: "Base".into(),
            extensibility: Extensibility::Appendable,
            base: None,
            members: vec![Member::new("a", 0, DynamicType::Bool)],
        });
        let child = DynamicType::Struct(Arc::new(StructType {
            name: "Child".into(),
            extensibility: Extensibility::Appendable,
            base: Some(base),
            members: vec![Member::new(
                "rows",
                1,
                DynamicType::Sequence {
                    element: Box::new(DynamicType::Array {
                        element: Box::new(DynamicType::Octet),
                        dimensions: vec![4],
                    }),
                    bound: None,
                },
            )],
        }));
        let idl = to_idl(&child);
        let expected = "\
@appendable
struct Base {
    boolean a;
};
typedef octet array_typedef_1[4];
@appendable
struct Child : Base {
    sequence<array_typedef_1> rows;
};
";
        assert_eq!(idl, expected, "\n{idl}");
    }
}
