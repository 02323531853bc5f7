//! IDL unions, written as Rust enums with data.

use crate::attrs::{Container, Ext, Variant};
use proc_macro2::TokenStream;
use quote::quote;
use syn::{DataEnum, DeriveInput, Fields};

enum Shape {
    /// No member: the discriminator alone.
    Unit,
    /// The value; the discriminator is the single label.
    Value,
    /// (discriminator, value), for several labels or the default branch.
    DiscriminatorAndValue,
    /// The discriminator of a union without a default branch that selects no branch.
    DiscriminatorOnly,
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
    let Some(disc_ty) = container.union.clone() else {
        return Err(syn::Error::new_spanned(
            name,
            "a union needs #[cdr(discriminator = T)]",
        ));
    };
    if container.ext == Ext::Mutable {
        return Err(syn::Error::new_spanned(
            name,
            "mutable unions are not supported yet; use final or appendable",
        ));
    }
    let ext = container.ext.tokens();

    let mut missing: Option<TokenStream> = None;
    let mut encode_arms = Vec::new();
    let mut json_arms = Vec::new();
    let mut decode_branches = Vec::new();
    let mut json_branches = Vec::new();
    let mut default_branch = None;
    let mut default_json = None;
    let mut dynamic_cases = Vec::new();
    let mut dynamic_no_member = Vec::new();
    let mut dynamic_default: Option<TokenStream> = None;
    for v in &data.variants {
        let attrs = Variant::parse(&v.attrs)?;
        let ident = &v.ident;
        let member = attrs
            .name
            .clone()
            .unwrap_or_else(|| snake(&ident.to_string()));
        let count = match &v.fields {
            Fields::Unit => 0,
            Fields::Unnamed(f) => f.unnamed.len(),
            Fields::Named(_) => {
                return Err(syn::Error::new_spanned(
                    v,
                    "union branches are tuple or unit variants",
                ))
            }
        };
        let single = attrs.cases.len() == 1 && !attrs.default;
        let shape = if attrs.no_branch {
            if count != 1 || attrs.default || !attrs.cases.is_empty() {
                return Err(syn::Error::new_spanned(
                    v,
                    "a no_branch variant holds just the discriminator, and has no case labels",
                ));
            }
            Shape::DiscriminatorOnly
        } else {
            match (count, single) {
            (0, true) => Shape::Unit,
            (1, true) => Shape::Value,
            (2, _) => Shape::DiscriminatorAndValue,
            (0, false) | (1, false) => {
                return Err(syn::Error::new_spanned(
                    v,
                    "a branch with several case labels, or the default branch, holds (discriminator, value)",
                ))
            }
            _ => return Err(syn::Error::new_spanned(v, "a union branch holds at most (discriminator, value)")),
        }
        };
        if attrs.cases.is_empty() && !attrs.default && !attrs.no_branch {
            return Err(syn::Error::new_spanned(
                v,
                "a union branch needs #[cdr(case = …)] or #[cdr(default)]",
            ));
        }
        let cases = &attrs.cases;
        let label = cases.first().cloned();
        // The runtime type's branches: those with a value; and, when the first variant has
        // none, the discriminator a missing union takes (derived unions take the first).
        if dynamic_default.is_none() {
            dynamic_default = Some(match shape {
                Shape::Unit => quote! { ::core::option::Option::Some((#label) as i64) },
                Shape::DiscriminatorOnly => quote! {
                    ::core::option::Option::Some(
                        ::ferrodds_cdr::dynamic::DynamicValue::default_of(
                            &<#disc_ty as ::ferrodds_cdr::Cdr>::dynamic_type(),
                        )
                        .as_discriminator(),
                    )
                },
                _ => quote! { ::core::option::Option::None },
            });
        }
        if matches!(shape, Shape::Unit) {
            dynamic_no_member.extend(cases.iter().map(|c| quote! { (#c) as i64 }));
        }
        if matches!(shape, Shape::Value | Shape::DiscriminatorAndValue) {
            if let Fields::Unnamed(f) = &v.fields {
                if let Some(vty) = f.unnamed.last().map(|f| &f.ty) {
                    let labels = cases.iter().map(|c| quote! { (#c) as i64 });
                    let default = attrs.default;
                    dynamic_cases.push(quote! {
                        ::ferrodds_cdr::dynamic::UnionCase {
                            name: #member.into(),
                            labels: ::std::vec![#(#labels),*],
                            default: #default,
                            ty: <#vty as ::ferrodds_cdr::Cdr>::dynamic_type(),
                        }
                    });
                }
            }
        }
        let (encode, json) = match shape {
            Shape::Unit => (
                quote! { #name::#ident => { let disc: #disc_ty = #label; ::ferrodds_cdr::Cdr::encode(&disc, e)?; } },
                quote! { #name::#ident => { let disc: #disc_ty = #label; map.insert("discriminator".into(), ::ferrodds_cdr::JsonView::to_json(&disc)); } },
            ),
            Shape::Value => (
                quote! { #name::#ident(v) => {
                    let disc: #disc_ty = #label;
                    ::ferrodds_cdr::Cdr::encode(&disc, e)?;
                    ::ferrodds_cdr::Cdr::encode(v, e).map_err(|err| err.in_member(#member))?;
                } },
                quote! { #name::#ident(v) => {
                    let disc: #disc_ty = #label;
                    map.insert("discriminator".into(), ::ferrodds_cdr::JsonView::to_json(&disc));
                    map.insert(#member.into(), ::ferrodds_cdr::JsonView::to_json(v));
                } },
            ),
            Shape::DiscriminatorAndValue => (
                quote! { #name::#ident(disc, v) => {
                    ::ferrodds_cdr::Cdr::encode(disc, e)?;
                    ::ferrodds_cdr::Cdr::encode(v, e).map_err(|err| err.in_member(#member))?;
                } },
                quote! { #name::#ident(disc, v) => {
                    map.insert("discriminator".into(), ::ferrodds_cdr::JsonView::to_json(disc));
                    map.insert(#member.into(), ::ferrodds_cdr::JsonView::to_json(v));
                } },
            ),
            Shape::DiscriminatorOnly => (
                quote! { #name::#ident(disc) => { ::ferrodds_cdr::Cdr::encode(disc, e)?; } },
                quote! { #name::#ident(disc) => { map.insert("discriminator".into(), ::ferrodds_cdr::JsonView::to_json(disc)); } },
            ),
        };
        // The default of a union (an absent member, a key-only sample's other members):
        // its first branch with that branch's default value (XTypes 7.6.2.3).
        if missing.is_none() {
            let cdr = quote!(::ferrodds_cdr::Cdr);
            missing = Some(match shape {
                Shape::Unit => quote! { ::core::option::Option::Some(#name::#ident) },
                Shape::Value => {
                    quote! { ::core::option::Option::Some(#name::#ident(#cdr::missing()?)) }
                }
                Shape::DiscriminatorAndValue => match &label {
                    Some(l) => {
                        quote! { ::core::option::Option::Some(#name::#ident(#l, #cdr::missing()?)) }
                    }
                    None => {
                        quote! { ::core::option::Option::Some(#name::#ident(#cdr::missing()?, #cdr::missing()?)) }
                    }
                },
                Shape::DiscriminatorOnly => {
                    quote! { ::core::option::Option::Some(#name::#ident(#cdr::missing()?)) }
                }
            });
        }
        encode_arms.push(encode);
        json_arms.push(json);
        let (build, build_json) = match shape {
            Shape::Unit => (quote! { #name::#ident }, quote! { #name::#ident }),
            Shape::Value => (
                quote! { #name::#ident(::ferrodds_cdr::Cdr::decode(d).map_err(|err| err.in_member(#member))?) },
                quote! { #name::#ident(::ferrodds_cdr::json_member(object, #member)?) },
            ),
            Shape::DiscriminatorAndValue => (
                quote! { #name::#ident(disc, ::ferrodds_cdr::Cdr::decode(d).map_err(|err| err.in_member(#member))?) },
                quote! { #name::#ident(disc, ::ferrodds_cdr::json_member(object, #member)?) },
            ),
            Shape::DiscriminatorOnly => (
                quote! { #name::#ident(disc) },
                quote! { #name::#ident(disc) },
            ),
        };
        if attrs.default || attrs.no_branch {
            if default_branch.is_some() {
                return Err(syn::Error::new_spanned(
                    v,
                    "a union has at most one default or no_branch variant",
                ));
            }
            default_branch = Some(build);
            default_json = Some(build_json);
        } else {
            let test = quote! { #(disc == (#cases))||* };
            decode_branches.push(quote! { if #test { #build } else });
            json_branches.push(quote! { if #test { #build_json } else });
        }
    }
    let dynamic_default_tokens =
        dynamic_default.unwrap_or_else(|| quote! { ::core::option::Option::None });
    let fallback = default_branch.unwrap_or_else(|| {
        quote! {
            return ::core::result::Result::Err(::ferrodds_cdr::DecodeError::new(
                ::ferrodds_cdr::DecodeErrorKind::UnknownDiscriminator {
                    type_name: #type_name.into(),
                    value: ::ferrodds_cdr::JsonView::to_json(&disc).to_string(),
                },
                at,
            ))
        }
    });
    let json_fallback = default_json.unwrap_or_else(|| {
        quote! {
            return ::core::result::Result::Err(::ferrodds_cdr::JsonError::new(
                concat!("a discriminator selecting a branch of ", #type_name),
                ::ferrodds_cdr::found(&::ferrodds_cdr::JsonView::to_json(&disc)),
            ).in_member("discriminator"))
        }
    });

    Ok(quote! {
        #[allow(clippy::unnecessary_cast, unreachable_code)]
        impl ::ferrodds_cdr::Cdr for #name {
            const TYPE_NAME: &'static str = #type_name;
            const KIND: ::ferrodds_cdr::TypeKind = ::ferrodds_cdr::TypeKind::Union(#ext);
            const MIN_SIZE: usize = {
                let s = <#disc_ty as ::ferrodds_cdr::Cdr>::MIN_SIZE;
                if s < 4 { s } else { 4 }
            };

            fn dynamic_type() -> ::ferrodds_cdr::dynamic::DynamicType {
                static TYPE: ::std::sync::OnceLock<::ferrodds_cdr::dynamic::DynamicType> =
                    ::std::sync::OnceLock::new();
                ::std::thread_local! {
                    static BUILDING: ::core::cell::Cell<bool> = const { ::core::cell::Cell::new(false) };
                }
                ::ferrodds_cdr::dynamic::cached(&TYPE, &BUILDING, #type_name, || {
                    ::ferrodds_cdr::dynamic::DynamicType::Union(::std::sync::Arc::new(
                        ::ferrodds_cdr::dynamic::UnionType {
                            name: #type_name.into(),
                            extensibility: #ext,
                            discriminator: <#disc_ty as ::ferrodds_cdr::Cdr>::dynamic_type(),
                            cases: ::std::vec![#(#dynamic_cases),*],
                            no_member: ::std::vec![#(#dynamic_no_member),*],
                            default_discriminator: #dynamic_default_tokens,
                        },
                    ))
                })
            }

            fn encode(&self, e: &mut ::ferrodds_cdr::Encoder<'_>) -> ::core::result::Result<(), ::ferrodds_cdr::EncodeError> {
                let dheader = ::ferrodds_cdr::member::begin_aggregate(e, #ext);
                match self { #(#encode_arms)* }
                ::ferrodds_cdr::member::end_aggregate(e, #ext, dheader)
            }

            fn decode(d: &mut ::ferrodds_cdr::Decoder<'_>) -> ::core::result::Result<Self, ::ferrodds_cdr::DecodeError> {
                let outer = ::ferrodds_cdr::member::begin_aggregate_decode(d, #ext)?;
                let at = d.position();
                let disc: #disc_ty = ::ferrodds_cdr::Cdr::decode(d).map_err(|err| err.in_member("discriminator"))?;
                let value = #(#decode_branches)* { #fallback };
                ::ferrodds_cdr::member::end_aggregate_decode(d, outer);
                ::core::result::Result::Ok(value)
            }

            fn max_end(_: usize, _: usize) -> ::core::option::Option<usize> {
                ::core::option::Option::None
            }

            fn missing() -> ::core::option::Option<Self> {
                #missing
            }
        }

        #[allow(unreachable_code)]
        impl ::ferrodds_cdr::JsonView for #name {
            fn to_json(&self) -> ::ferrodds_cdr::serde_json::Value {
                let mut map = ::ferrodds_cdr::serde_json::Map::new();
                match self { #(#json_arms)* }
                ::ferrodds_cdr::serde_json::Value::Object(map)
            }

            fn from_json(value: &::ferrodds_cdr::serde_json::Value) -> ::core::result::Result<Self, ::ferrodds_cdr::JsonError> {
                let object = ::ferrodds_cdr::expect_object(value, #type_name)?;
                let disc: #disc_ty = ::ferrodds_cdr::json_member(object, "discriminator")?;
                ::core::result::Result::Ok(#(#json_branches)* { #json_fallback })
            }
        }
    })
}

fn snake(s: &str) -> String {
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if c.is_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}
