//! C-like enums: IDL enums, with `bit_bound` deciding their size on the wire.

use crate::attrs::Container;
use proc_macro2::TokenStream;
use quote::quote;
use syn::{DataEnum, DeriveInput, Expr, ExprLit, ExprUnary, Fields, Lit, UnOp};

fn literal_value(expr: &Expr) -> syn::Result<i64> {
    match expr {
        Expr::Lit(ExprLit {
            lit: Lit::Int(i), ..
        }) => i.base10_parse(),
        Expr::Unary(ExprUnary {
            op: UnOp::Neg(_),
            expr,
            ..
        }) => literal_value(expr).map(|v| -v),
        Expr::Group(g) => literal_value(&g.expr),
        _ => Err(syn::Error::new_spanned(
            expr,
            "enumerator values must be integer literals",
        )),
    }
}

pub(crate) fn expand(
    input: &DeriveInput,
    data: &DataEnum,
    container: Container,
) -> syn::Result<TokenStream> {
    let name = &input.ident;
    let type_name = container
        .type_name
        .clone()
        .unwrap_or_else(|| name.to_string());
    let bits = container.bit_bound.unwrap_or(32);
    let size: usize = match bits {
        1..=8 => 1,
        9..=16 => 2,
        17..=32 => 4,
        _ => {
            return Err(syn::Error::new_spanned(
                name,
                "an enum's bit_bound is at most 32",
            ))
        }
    };
    if data.variants.is_empty() {
        return Err(syn::Error::new_spanned(
            name,
            "an IDL enum needs at least one enumerator",
        ));
    }
    let mut next = 0i64;
    let mut idents = Vec::new();
    let mut values = Vec::new();
    let mut names = Vec::new();
    for v in &data.variants {
        if !matches!(v.fields, Fields::Unit) {
            return Err(syn::Error::new_spanned(
                v,
                "an enum with data is an IDL union: add #[cdr(union, discriminator = T)]",
            ));
        }
        let attrs = crate::attrs::Variant::parse(&v.attrs)?;
        let value = match &v.discriminant {
            Some((_, expr)) => literal_value(expr)?,
            None => next,
        };
        // Enums narrower than 32 bits go on the wire unsigned (as Cyclone DDS writes them),
        // so their values run from 0 to 2^bits - 1.
        let (min, max) = if bits >= 32 {
            (i64::from(i32::MIN), i64::from(u32::MAX))
        } else {
            (0, (1i64 << bits) - 1)
        };
        if value < min || value > max {
            return Err(syn::Error::new_spanned(
                v,
                format!("enumerator value {value} does not fit bit_bound {bits}"),
            ));
        }
        next = value + 1;
        idents.push(&v.ident);
        values.push(value as i32);
        names.push(attrs.name.unwrap_or_else(|| v.ident.to_string()));
    }
    let first = idents[0];
    let names_list = names.join(", ");

    Ok(quote! {
        impl ::ferrodds_cdr::Cdr for #name {
            const TYPE_NAME: &'static str = #type_name;
            const KIND: ::ferrodds_cdr::TypeKind = ::ferrodds_cdr::TypeKind::Enumerated { size: #size };
            const MIN_SIZE: usize = #size;

            fn dynamic_type() -> ::ferrodds_cdr::dynamic::DynamicType {
                static TYPE: ::std::sync::OnceLock<::ferrodds_cdr::dynamic::DynamicType> =
                    ::std::sync::OnceLock::new();
                TYPE.get_or_init(|| {
                    ::ferrodds_cdr::dynamic::DynamicType::Enum(::std::sync::Arc::new(
                        ::ferrodds_cdr::dynamic::EnumType {
                            name: #type_name.into(),
                            bit_bound: #bits,
                            enumerators: ::std::vec![#((#names.into(), #values)),*],
                        },
                    ))
                })
                .clone()
            }

            #[inline]
            fn encode(&self, e: &mut ::ferrodds_cdr::Encoder<'_>) -> ::core::result::Result<(), ::ferrodds_cdr::EncodeError> {
                let value: i32 = match self { #(#name::#idents => #values,)* };
                ::ferrodds_cdr::member::encode_enum(e, value, #size);
                ::core::result::Result::Ok(())
            }

            #[inline]
            fn decode(d: &mut ::ferrodds_cdr::Decoder<'_>) -> ::core::result::Result<Self, ::ferrodds_cdr::DecodeError> {
                let at = d.position();
                match ::ferrodds_cdr::member::decode_enum(d, #size)? {
                    #(#values => ::core::result::Result::Ok(#name::#idents),)*
                    other => ::core::result::Result::Err(::ferrodds_cdr::DecodeError::new(
                        ::ferrodds_cdr::DecodeErrorKind::UnknownEnumerator { type_name: #type_name.into(), value: i64::from(other) },
                        at,
                    )),
                }
            }

            fn max_end(offset: usize, max_align: usize) -> ::core::option::Option<usize> {
                ::core::option::Option::Some(::ferrodds_cdr::member::enum_max_end(offset, #size, max_align))
            }

            fn missing() -> ::core::option::Option<Self> {
                ::core::option::Option::Some(#name::#first)
            }
        }

        impl ::ferrodds_cdr::JsonView for #name {
            fn to_json(&self) -> ::ferrodds_cdr::serde_json::Value {
                ::ferrodds_cdr::serde_json::Value::from(match self { #(#name::#idents => #names,)* })
            }

            fn from_json(value: &::ferrodds_cdr::serde_json::Value) -> ::core::result::Result<Self, ::ferrodds_cdr::JsonError> {
                match value.as_str() {
                    #(::core::option::Option::Some(#names) => ::core::result::Result::Ok(#name::#idents),)*
                    _ => ::core::result::Result::Err(::ferrodds_cdr::JsonError::new(
                        concat!("one of ", #names_list, " (", #type_name, ")"),
                        ::ferrodds_cdr::found(value),
                    )),
                }
            }
        }
    })
}
