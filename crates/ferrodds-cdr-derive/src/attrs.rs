//! Parsing of `#[cdr(...)]` attributes.

use syn::{Attribute, Expr, LitInt, LitStr, Type};

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ext {
    Final,
    Appendable,
    Mutable,
}

impl Ext {
    pub(crate) fn tokens(self) -> proc_macro2::TokenStream {
        match self {
            Ext::Final => quote::quote!(::ferrodds_cdr::Extensibility::Final),
            Ext::Appendable => quote::quote!(::ferrodds_cdr::Extensibility::Appendable),
            Ext::Mutable => quote::quote!(::ferrodds_cdr::Extensibility::Mutable),
        }
    }
}

pub(crate) struct Container {
    pub(crate) ext: Ext,
    pub(crate) type_name: Option<String>,
    pub(crate) autoid_hash: bool,
    pub(crate) union: Option<Type>,
    pub(crate) bit_bound: Option<u32>,
    pub(crate) transparent: bool,
    pub(crate) bitmask: bool,
    /// A bitmask's flag names, by position (`flags = "A B C"`).
    pub(crate) flags: Vec<String>,
}

impl Container {
    pub(crate) fn parse(attrs: &[Attribute]) -> syn::Result<Self> {
        let mut c = Container {
            ext: Ext::Final,
            type_name: None,
            autoid_hash: false,
            union: None,
            bit_bound: None,
            transparent: false,
            bitmask: false,
            flags: Vec::new(),
        };
        let mut is_union = false;
        let mut discriminator = None;
        for attr in attrs.iter().filter(|a| a.path().is_ident("cdr")) {
            attr.parse_nested_meta(|meta| {
                let p = &meta.path;
                if p.is_ident("final") {
                    c.ext = Ext::Final;
                } else if p.is_ident("appendable") {
                    c.ext = Ext::Appendable;
                } else if p.is_ident("mutable") {
                    c.ext = Ext::Mutable;
                } else if p.is_ident("type_name") {
                    c.type_name = Some(meta.value()?.parse::<LitStr>()?.value());
                } else if p.is_ident("autoid") {
                    let v = meta.value()?.parse::<LitStr>()?;
                    c.autoid_hash = match v.value().to_ascii_lowercase().as_str() {
                        "hash" => true,
                        "sequential" => false,
                        _ => return Err(syn::Error::new(v.span(), "expected \"hash\" or \"sequential\"")),
                    };
                } else if p.is_ident("union") {
                    is_union = true;
                } else if p.is_ident("discriminator") {
                    discriminator = Some(meta.value()?.parse::<Type>()?);
                } else if p.is_ident("bit_bound") {
                    let v = meta.value()?.parse::<LitInt>()?;
                    let n: u32 = v.base10_parse()?;
                    if !(1..=64).contains(&n) {
                        return Err(syn::Error::new(v.span(), "expected a bit bound from 1 to 64"));
                    }
                    c.bit_bound = Some(n);
                } else if p.is_ident("bitmask") {
                    c.transparent = true;
                    c.bitmask = true;
                } else if p.is_ident("transparent") {
                    c.transparent = true;
                } else if p.is_ident("flags") {
                    let v = meta.value()?.parse::<LitStr>()?;
                    c.flags = v.value().split_whitespace().map(str::to_owned).collect();
                } else {
                    return Err(meta.error("unknown cdr attribute; expected final, appendable, mutable, type_name, autoid, union, discriminator, bit_bound, bitmask or flags"));
                }
                Ok(())
            })?;
        }
        if is_union {
            c.union = Some(discriminator.ok_or_else(|| {
                syn::Error::new(
                    proc_macro2::Span::call_site(),
                    "a union needs #[cdr(discriminator = T)]",
                )
            })?);
        }
        Ok(c)
    }
}

#[derive(Default)]
pub(crate) struct Field {
    pub(crate) key: bool,
    pub(crate) id: Option<u32>,
    pub(crate) optional: bool,
    pub(crate) must_understand: bool,
    pub(crate) bound: Option<usize>,
    pub(crate) name: Option<String>,
    pub(crate) base: bool,
}

impl Field {
    pub(crate) fn parse(attrs: &[Attribute]) -> syn::Result<Self> {
        let mut f = Field::default();
        for attr in attrs.iter().filter(|a| a.path().is_ident("cdr")) {
            attr.parse_nested_meta(|meta| {
                let p = &meta.path;
                if p.is_ident("key") {
                    f.key = true;
                } else if p.is_ident("id") {
                    let v: u32 = meta.value()?.parse::<LitInt>()?.base10_parse()?;
                    if v > 0x0fff_ffff {
                        return Err(meta.error("member ids are at most 0x0fffffff"));
                    }
                    f.id = Some(v);
                } else if p.is_ident("optional") {
                    f.optional = true;
                } else if p.is_ident("must_understand") {
                    f.must_understand = true;
                } else if p.is_ident("bound") {
                    f.bound = Some(meta.value()?.parse::<LitInt>()?.base10_parse()?);
                } else if p.is_ident("name") {
                    f.name = Some(meta.value()?.parse::<LitStr>()?.value());
                } else if p.is_ident("base") {
                    f.base = true;
                } else {
                    return Err(meta.error("unknown cdr member attribute; expected key, id, optional, must_understand, bound, name or base"));
                }
                Ok(())
            })?;
        }
        Ok(f)
    }
}

pub(crate) struct Variant {
    pub(crate) name: Option<String>,
    pub(crate) cases: Vec<Expr>,
    pub(crate) default: bool,
    pub(crate) no_branch: bool,
}

impl Variant {
    pub(crate) fn parse(attrs: &[Attribute]) -> syn::Result<Self> {
        let mut v = Variant {
            name: None,
            cases: Vec::new(),
            default: false,
            no_branch: false,
        };
        for attr in attrs.iter().filter(|a| a.path().is_ident("cdr")) {
            attr.parse_nested_meta(|meta| {
                let p = &meta.path;
                if p.is_ident("name") {
                    v.name = Some(meta.value()?.parse::<LitStr>()?.value());
                } else if p.is_ident("case") {
                    v.cases.push(meta.value()?.parse::<Expr>()?);
                } else if p.is_ident("default") {
                    v.default = true;
                } else if p.is_ident("no_branch") {
                    v.no_branch = true;
                } else {
                    return Err(meta.error(
                        "unknown cdr attribute; expected name, case, default or no_branch",
                    ));
                }
                Ok(())
            })?;
        }
        Ok(v)
    }
}

/// `T` when `ty` is `Option<T>`.
pub(crate) fn option_inner(ty: &Type) -> Option<&Type> {
    let Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    if last.ident != "Option" {
        return None;
    }
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    match args.args.first()? {
        syn::GenericArgument::Type(t) if args.args.len() == 1 => Some(t),
        _ => None,
    }
}

/// `T` when `ty` is `Vec<T>`; `None` for other types (then a bound applies to a string).
pub(crate) fn vec_inner(ty: &Type) -> Option<&Type> {
    let Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    if last.ident != "Vec" {
        return None;
    }
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    match args.args.first()? {
        syn::GenericArgument::Type(t) => Some(t),
        _ => None,
    }
}

/// The member id `@autoid(HASH)` gives `name` (XTypes 7.3.1.2.1.1).
pub(crate) fn hashed_id(name: &str) -> u32 {
    use md5::{Digest, Md5};
    let d = Md5::digest(name.as_bytes());
    u32::from_le_bytes([d[0], d[1], d[2], d[3]]) & 0x0fff_ffff
}
