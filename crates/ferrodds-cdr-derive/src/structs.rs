//! Structs: final, appendable and mutable; inheritance through a `#[cdr(base)]` field;
//! optional, key, bounded and must-understand members; and bitmask newtypes.

use crate::attrs::{hashed_id, option_inner, vec_inner, Container, Ext, Field};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::{DataStruct, DeriveInput, Fields, Ident, Type};

struct Member<'a> {
    ident: &'a Ident,
    /// The value type: `T` for an `Option<T>` field.
    value_ty: &'a Type,
    name: String,
    attrs: Field,
    id: TokenStream,
    /// The id as a number when known at expansion time (no base struct), for ordering keys.
    id_value: Option<u32>,
    optional: bool,
}

pub(crate) fn expand(input: &DeriveInput, data: &DataStruct) -> syn::Result<TokenStream> {
    let container = Container::parse(&input.attrs)?;
    if !input.generics.params.is_empty() {
        return Err(syn::Error::new_spanned(
            &input.generics,
            "Cdr cannot be derived for generic types yet",
        ));
    }
    if container.transparent {
        return expand_transparent(input, data, &container);
    }
    let Fields::Named(named) = &data.fields else {
        return Err(syn::Error::new_spanned(
            &input.ident,
            "Cdr needs named fields (or #[cdr(bitmask)] on a one-field tuple struct)",
        ));
    };

    let name = &input.ident;
    let vis = &input.vis;
    let type_name = container
        .type_name
        .clone()
        .unwrap_or_else(|| name.to_string());
    let ext = container.ext;
    let ext_tokens = ext.tokens();

    // The base struct (IDL inheritance) is the first field marked `base`.
    let mut base: Option<(&Ident, &Type)> = None;
    let mut members = Vec::new();
    let mut next_relative = 0u32; // ids after the base's, relative to its next id
    let mut absolute: Option<u32> = None; // set once an explicit id fixes the numbering
    for (index, field) in named.named.iter().enumerate() {
        let attrs = Field::parse(&field.attrs)?;
        let ident = field
            .ident
            .as_ref()
            .ok_or_else(|| syn::Error::new_spanned(field, "expected a named field"))?;
        if attrs.base {
            if index != 0 {
                return Err(syn::Error::new_spanned(
                    field,
                    "the base struct must be the first field",
                ));
            }
            base = Some((ident, &field.ty));
            continue;
        }
        let inner = option_inner(&field.ty);
        let optional = attrs.optional || inner.is_some();
        if optional && inner.is_none() {
            return Err(syn::Error::new_spanned(
                &field.ty,
                "an optional member must have type Option<T>",
            ));
        }
        if optional && attrs.key {
            return Err(syn::Error::new_spanned(
                field,
                "a key member cannot be optional",
            ));
        }
        let value_ty = inner.unwrap_or(&field.ty);
        let idl_name = attrs
            .name
            .clone()
            .unwrap_or_else(|| ident.to_string().trim_start_matches("r#").to_owned());
        let (id, id_value) = if container.autoid_hash && attrs.id.is_none() {
            let h = hashed_id(&idl_name);
            (quote!(#h), Some(h))
        } else if let Some(explicit) = attrs.id {
            absolute = Some(explicit + 1);
            (quote!(#explicit), Some(explicit))
        } else if let Some(next) = absolute {
            absolute = Some(next + 1);
            (quote!(#next), Some(next))
        } else {
            let k = next_relative;
            next_relative += 1;
            match base {
                Some((_, base_ty)) => (quote!((<#base_ty>::__CDR_NEXT_MEMBER_ID + #k)), None),
                None => (quote!(#k), Some(k)),
            }
        };
        if attrs.bound.is_some() && vec_inner(value_ty).is_none() && !is_string(value_ty) {
            return Err(syn::Error::new_spanned(
                field,
                "bound applies to String and Vec<T> members",
            ));
        }
        members.push(Member {
            ident,
            value_ty,
            name: idl_name,
            attrs,
            id,
            id_value,
            optional,
        });
    }
    let next_id = match (absolute, base) {
        (Some(n), _) => quote!(#n),
        (None, Some((_, base_ty))) => quote!((<#base_ty>::__CDR_NEXT_MEMBER_ID + #next_relative)),
        (None, None) => quote!(#next_relative),
    };

    let slots_ident = format_ident!("__CdrSlots_{}", name);
    let base_slots_ty = match base {
        Some((_, ty)) => Some(slots_path(ty)?),
        None => None,
    };

    // --- encode members
    let encode_members = members.iter().map(|m| {
        let ident = m.ident;
        let n = &m.name;
        let id = &m.id;
        let vt = m.value_ty;
        // Keys carry no must-understand flag: Cyclone DDS leaves it off (for RTI's sake).
        let mu = m.attrs.must_understand;
        if ext == Ext::Mutable {
            let value = encode_value(m, quote!(v));
            let body = quote! {
                let start = ::ferrodds_cdr::member::begin_member(e, #id, #mu, <#vt as ::ferrodds_cdr::Cdr>::KIND);
                #value.map_err(|err| err.in_member(#n))?;
                ::ferrodds_cdr::member::end_member(e, start).map_err(|err| err.in_member(#n))?;
            };
            if is_optional(m) {
                quote! { if let ::core::option::Option::Some(v) = &self.#ident { #body } }
            } else {
                quote! { { let v = &self.#ident; #body } }
            }
        } else if is_optional(m) {
            let pre = m.attrs.bound.map(|b| quote! {
                if let ::core::option::Option::Some(v) = &self.#ident {
                    ::ferrodds_cdr::member::check_bound(v.len(), #b).map_err(|err| err.in_member(#n))?;
                }
            });
            quote! {
                #pre
                ::ferrodds_cdr::member::encode_optional(&self.#ident, #id, #mu, e).map_err(|err| err.in_member(#n))?;
            }
        } else {
            let value = encode_value(m, quote!(&self.#ident));
            quote! { #value.map_err(|err| err.in_member(#n))?; }
        }
    });
    let encode_base = base.map(|(ident, _)| quote! { self.#ident.__cdr_encode_members(e)?; });

    // --- decode
    let decode_plain_fields = members.iter().map(|m| {
        let ident = m.ident;
        let n = &m.name;
        let vt = m.value_ty;
        let value = if is_optional(m) {
            quote! { ::ferrodds_cdr::member::decode_optional::<#vt>(d) }
        } else {
            decode_value(m)
        };
        let missing = missing_value(m, &type_name);
        if ext == Ext::Appendable {
            quote! {
                #ident: if d.is_at_end() { #missing } else { #value.map_err(|err| err.in_member(#n))? },
            }
        } else {
            quote! { #ident: #value.map_err(|err| err.in_member(#n))?, }
        }
    });
    let decode_base = base.map(|(ident, ty)| quote! { #ident: <#ty>::__cdr_decode_members(d)?, });
    // The same, into the members of `self` (`Cdr::decode_into`).
    let decode_into_fields = members.iter().map(|m| {
        let ident = m.ident;
        let n = &m.name;
        let vt = m.value_ty;
        let read = if is_optional(m) {
            quote! { self.#ident = ::ferrodds_cdr::member::decode_optional::<#vt>(d).map_err(|err| err.in_member(#n))?; }
        } else {
            let value = decode_value_into(m, quote!(&mut self.#ident));
            quote! { #value.map_err(|err| err.in_member(#n))?; }
        };
        if ext == Ext::Appendable {
            let missing = missing_value(m, &type_name);
            quote! { if d.is_at_end() { self.#ident = #missing; } else { #read } }
        } else {
            read
        }
    });
    let decode_into_base =
        base.map(|(ident, _)| quote! { self.#ident.__cdr_decode_members_into(d)?; });

    let slot_fields = members.iter().map(|m| {
        let ident = m.ident;
        let vt = m.value_ty;
        quote! { #ident: ::core::option::Option<#vt>, }
    });
    let slot_base = base_slots_ty.as_ref().map(|p| quote! { __base: #p, });
    let take_arms = members.iter().map(|m| {
        let ident = m.ident;
        let id = &m.id;
        let n = &m.name;
        let value = decode_value(m);
        quote! {
            x if x == #id => {
                if slots.#ident.is_some() {
                    return ::core::result::Result::Err(::ferrodds_cdr::member::duplicate_member(d, #type_name, x));
                }
                slots.#ident = ::core::option::Option::Some(#value.map_err(|err| err.in_member(#n))?);
                ::core::result::Result::Ok(true)
            }
        }
    });
    let take_fallback = match base {
        Some((_, ty)) => quote! { _ => <#ty>::__cdr_take_member(&mut slots.__base, id, d), },
        None => quote! { _ => ::core::result::Result::Ok(false), },
    };
    let finish_fields = members.iter().map(|m| {
        let ident = m.ident;
        let n = &m.name;
        let vt = m.value_ty;
        if is_optional(m) {
            quote! { #ident: slots.#ident, }
        } else if m.attrs.key {
            quote! {
                #ident: slots.#ident.ok_or_else(|| ::ferrodds_cdr::member::missing_member(d, #type_name, #n))?,
            }
        } else {
            quote! {
                #ident: match slots.#ident {
                    ::core::option::Option::Some(v) => v,
                    ::core::option::Option::None => <#vt as ::ferrodds_cdr::Cdr>::missing()
                        .ok_or_else(|| ::ferrodds_cdr::member::missing_member(d, #type_name, #n))?,
                },
            }
        }
    });
    let finish_base =
        base.map(|(ident, ty)| quote! { #ident: <#ty>::__cdr_finish(slots.__base, d)?, });

    let mutable_items = if ext == Ext::Mutable {
        quote! {
            #[doc(hidden)]
            pub fn __cdr_take_member(slots: &mut #slots_ident, id: u32, d: &mut ::ferrodds_cdr::Decoder<'_>)
                -> ::core::result::Result<bool, ::ferrodds_cdr::DecodeError>
            {
                match id {
                    #(#take_arms)*
                    #take_fallback
                }
            }

            #[doc(hidden)]
            pub fn __cdr_finish(slots: #slots_ident, d: &mut ::ferrodds_cdr::Decoder<'_>)
                -> ::core::result::Result<Self, ::ferrodds_cdr::DecodeError>
            {
                ::core::result::Result::Ok(Self { #finish_base #(#finish_fields)* })
            }
        }
    } else {
        quote! {
            #[doc(hidden)]
            #[inline]
            pub fn __cdr_decode_members(d: &mut ::ferrodds_cdr::Decoder<'_>)
                -> ::core::result::Result<Self, ::ferrodds_cdr::DecodeError>
            {
                ::core::result::Result::Ok(Self { #decode_base #(#decode_plain_fields)* })
            }

            #[doc(hidden)]
            #[inline]
            pub fn __cdr_decode_members_into(&mut self, d: &mut ::ferrodds_cdr::Decoder<'_>)
                -> ::core::result::Result<(), ::ferrodds_cdr::DecodeError>
            {
                #decode_into_base
                #(#decode_into_fields)*
                ::core::result::Result::Ok(())
            }
        }
    };
    let slots_struct = if ext == Ext::Mutable {
        quote! {
            #[doc(hidden)]
            #[allow(non_camel_case_types, missing_docs, unreachable_pub)]
            #[derive(Default)]
            #vis struct #slots_ident { #slot_base #(#slot_fields)* }
        }
    } else {
        quote!()
    };
    // A mutable struct's members come in any order and may be absent: it is read anew.
    let decode_into_item = if ext == Ext::Mutable {
        quote!()
    } else {
        quote! {
            #[inline]
            fn decode_into(&mut self, d: &mut ::ferrodds_cdr::Decoder<'_>) -> ::core::result::Result<(), ::ferrodds_cdr::DecodeError> {
                let outer = ::ferrodds_cdr::member::begin_aggregate_decode(d, #ext_tokens)?;
                self.__cdr_decode_members_into(d)?;
                ::ferrodds_cdr::member::end_aggregate_decode(d, outer);
                ::core::result::Result::Ok(())
            }
        }
    };
    let decode_body = if ext == Ext::Mutable {
        quote! {
            let outer = ::ferrodds_cdr::member::begin_aggregate_decode(d, #ext_tokens)?;
            let mut slots = #slots_ident::default();
            while let ::core::option::Option::Some(header) = ::ferrodds_cdr::member::next_member(d)? {
                let id = header.id;
                if !Self::__cdr_take_member(&mut slots, id, d)? && header.must_understand {
                    return ::core::result::Result::Err(::ferrodds_cdr::member::unknown_must_understand(d, #type_name, id));
                }
                ::ferrodds_cdr::member::end_member_decode(d, header);
            }
            let value = Self::__cdr_finish(slots, d)?;
            ::ferrodds_cdr::member::end_aggregate_decode(d, outer);
            ::core::result::Result::Ok(value)
        }
    } else {
        quote! {
            let outer = ::ferrodds_cdr::member::begin_aggregate_decode(d, #ext_tokens)?;
            let value = Self::__cdr_decode_members(d)?;
            ::ferrodds_cdr::member::end_aggregate_decode(d, outer);
            ::core::result::Result::Ok(value)
        }
    };

    // --- the runtime type (crate::dynamic)
    let dynamic_members = members.iter().map(|m| {
        let n = &m.name;
        let id = &m.id;
        let vt = m.value_ty;
        let ty = match (m.attrs.bound, vec_inner(vt)) {
            (Some(b), Some(inner)) => quote! {
                ::ferrodds_cdr::dynamic::DynamicType::Sequence {
                    element: ::std::boxed::Box::new(<#inner as ::ferrodds_cdr::Cdr>::dynamic_type()),
                    bound: ::core::option::Option::Some(#b),
                }
            },
            (Some(b), None) => quote! {
                ::ferrodds_cdr::dynamic::DynamicType::String { bound: ::core::option::Option::Some(#b) }
            },
            (None, _) => quote! { <#vt as ::ferrodds_cdr::Cdr>::dynamic_type() },
        };
        let (key, optional, mu) = (m.attrs.key, is_optional(m), m.attrs.must_understand);
        quote! {
            ::ferrodds_cdr::dynamic::Member {
                name: #n.into(),
                id: #id,
                ty: #ty,
                key: #key,
                optional: #optional,
                must_understand: #mu,
            }
        }
    });
    let dynamic_base = match base {
        Some((_, ty)) => quote! {
            match <#ty as ::ferrodds_cdr::Cdr>::dynamic_type() {
                ::ferrodds_cdr::dynamic::DynamicType::Struct(s) => ::core::option::Option::Some(s),
                _ => ::core::option::Option::None,
            }
        },
        None => quote! { ::core::option::Option::None },
    };

    // --- keys
    let own_keys: Vec<&Member> = {
        let mut keys: Vec<&Member> = members.iter().filter(|m| m.attrs.key).collect();
        if keys.iter().all(|m| m.id_value.is_some()) {
            keys.sort_by_key(|m| m.id_value);
        }
        keys
    };
    let base_keyed = match base {
        Some((_, ty)) => quote!(<#ty as ::ferrodds_cdr::Cdr>::IS_KEYED),
        None => quote!(false),
    };
    let has_own_keys = !own_keys.is_empty();
    let encode_key_of = |m: &Member| {
        let ident = m.ident;
        let n = &m.name;
        quote! { ::ferrodds_cdr::Cdr::encode_key(&self.#ident, e).map_err(|err| err.in_member(#n))?; }
    };
    let key_fields = own_keys.iter().map(|m| encode_key_of(m));
    let all_key_fields = members.iter().map(|m| {
        if is_optional(m) {
            let ident = m.ident;
            let id = &m.id;
            let n = &m.name;
            let mu = m.attrs.must_understand;
            quote! { ::ferrodds_cdr::member::encode_optional(&self.#ident, #id, #mu, e).map_err(|err| err.in_member(#n))?; }
        } else {
            encode_key_of(m)
        }
    });
    let (base_key, base_all) = match base {
        Some((ident, ty)) => (
            quote! { if <#ty as ::ferrodds_cdr::Cdr>::IS_KEYED { self.#ident.__cdr_encode_key_members(e)?; } },
            quote! { self.#ident.__cdr_encode_key_members(e)?; },
        ),
        None => (quote!(), quote!()),
    };
    let key_max_of = |m: &Member| {
        let v = key_max_value(m);
        quote! { end = #v?; }
    };
    let key_max_keys = own_keys.iter().map(|m| key_max_of(m));
    let key_max_all = members.iter().map(|m| {
        if is_optional(m) {
            quote! { return ::core::option::Option::None; }
        } else {
            key_max_of(m)
        }
    });
    let (base_key_max, base_all_max) = match base {
        Some((_, ty)) => (
            quote! { if <#ty as ::ferrodds_cdr::Cdr>::IS_KEYED { end = <#ty>::__cdr_key_max_end(end, max_align)?; } },
            quote! { end = <#ty>::__cdr_key_max_end(end, max_align)?; },
        ),
        None => (quote!(), quote!()),
    };
    let members_max = members.iter().map(|m| {
        if is_optional(m) {
            quote! { return ::core::option::Option::None; }
        } else {
            let v = max_value(m);
            quote! { end = #v?; }
        }
    });
    let base_members_max =
        base.map(|(_, ty)| quote! { end = <#ty>::__cdr_members_max_end(end, max_align)?; });
    let max_end_body = match ext {
        Ext::Final => quote! { Self::__cdr_members_max_end(offset, max_align) },
        Ext::Appendable => quote! {
            Self::__cdr_members_max_end(::ferrodds_cdr::align_up(offset, 4, max_align) + 4, max_align)
        },
        Ext::Mutable => quote! { let _ = (offset, max_align); ::core::option::Option::None },
    };

    // --- key-only samples (what dispose and unregister carry)
    let key_sample_fields = members.iter().filter(|m| m.attrs.key).map(|m| {
        let ident = m.ident;
        let n = &m.name;
        let id = &m.id;
        let vt = m.value_ty;
        if ext == Ext::Mutable {
            quote! {
                let start = ::ferrodds_cdr::member::begin_member(e, #id, false, <#vt as ::ferrodds_cdr::Cdr>::KIND);
                ::ferrodds_cdr::Cdr::encode_key_sample(&self.#ident, e).map_err(|err| err.in_member(#n))?;
                ::ferrodds_cdr::member::end_member(e, start).map_err(|err| err.in_member(#n))?;
            }
        } else {
            quote! { ::ferrodds_cdr::Cdr::encode_key_sample(&self.#ident, e).map_err(|err| err.in_member(#n))?; }
        }
    });
    let key_sample_base = base.map(|(ident, ty)| quote! {
        if <#ty as ::ferrodds_cdr::Cdr>::IS_KEYED { self.#ident.__cdr_encode_key_sample_members(e)?; }
    });
    let decode_key_sample_fields = members.iter().map(|m| {
        let ident = m.ident;
        let n = &m.name;
        let vt = m.value_ty;
        if m.attrs.key {
            quote! { #ident: <#vt as ::ferrodds_cdr::Cdr>::decode_key_sample(d).map_err(|err| err.in_member(#n))?, }
        } else {
            let missing = missing_value(m, &type_name);
            quote! { #ident: #missing, }
        }
    });
    let decode_key_sample_base = base.map(|(ident, ty)| quote! {
        #ident: if <#ty as ::ferrodds_cdr::Cdr>::IS_KEYED {
            <#ty>::__cdr_decode_key_sample_members(d)?
        } else {
            <#ty as ::ferrodds_cdr::Cdr>::missing().ok_or_else(|| ::ferrodds_cdr::member::missing_member(d, #type_name, "base"))?
        },
    });
    let decode_key_sample_body = if ext == Ext::Mutable {
        // Absent members of a mutable type take their defaults anyway.
        quote! { <Self as ::ferrodds_cdr::Cdr>::decode(d) }
    } else {
        quote! {
            if !<Self as ::ferrodds_cdr::Cdr>::IS_KEYED {
                return <Self as ::ferrodds_cdr::Cdr>::decode(d);
            }
            let outer = ::ferrodds_cdr::member::begin_aggregate_decode(d, #ext_tokens)?;
            let value = Self::__cdr_decode_key_sample_members(d)?;
            ::ferrodds_cdr::member::end_aggregate_decode(d, outer);
            ::core::result::Result::Ok(value)
        }
    };

    // --- min size, missing, json
    let min_terms = members.iter().filter(|m| !is_optional(m)).map(|m| {
        let vt = m.value_ty;
        quote! { + <#vt as ::ferrodds_cdr::Cdr>::MIN_SIZE }
    });
    let min_base = base.map(|(_, ty)| quote! { + <#ty as ::ferrodds_cdr::Cdr>::MIN_SIZE });
    let min_size = match ext {
        Ext::Final => quote! { 0 #min_base #(#min_terms)* },
        Ext::Appendable => {
            quote! { { let s = 0 #min_base #(#min_terms)*; if s < 4 { s } else { 4 } } }
        }
        Ext::Mutable => quote! { 0 },
    };
    let missing_fields = members.iter().map(|m| {
        let ident = m.ident;
        let vt = m.value_ty;
        if is_optional(m) {
            quote! { #ident: ::core::option::Option::None, }
        } else {
            quote! { #ident: <#vt as ::ferrodds_cdr::Cdr>::missing()?, }
        }
    });
    let missing_base =
        base.map(|(ident, ty)| quote! { #ident: <#ty as ::ferrodds_cdr::Cdr>::missing()?, });
    let json_out = members.iter().map(|m| {
        let ident = m.ident;
        let n = &m.name;
        quote! { map.insert(::std::string::String::from(#n), ::ferrodds_cdr::JsonView::to_json(&self.#ident)); }
    });
    let json_out_base = base.map(|(ident, _)| quote! { self.#ident.__cdr_json_members(map); });
    let json_in = members.iter().map(|m| {
        let ident = m.ident;
        let n = &m.name;
        quote! { #ident: ::ferrodds_cdr::json_member(object, #n)?, }
    });
    let json_in_base =
        base.map(|(ident, ty)| quote! { #ident: <#ty>::__cdr_from_json_members(object)?, });

    Ok(quote! {
        #slots_struct

        #[allow(clippy::needless_question_mark, unused_mut, unused_variables, unreachable_code)]
        impl #name {
            #[doc(hidden)]
            pub const __CDR_NEXT_MEMBER_ID: u32 = #next_id;

            #[doc(hidden)]
            #[inline]
            pub fn __cdr_encode_members(&self, e: &mut ::ferrodds_cdr::Encoder<'_>)
                -> ::core::result::Result<(), ::ferrodds_cdr::EncodeError>
            {
                #encode_base
                #(#encode_members)*
                ::core::result::Result::Ok(())
            }

            #mutable_items

            #[doc(hidden)]
            pub fn __cdr_encode_key_members(&self, e: &mut ::ferrodds_cdr::Encoder<'_>)
                -> ::core::result::Result<(), ::ferrodds_cdr::EncodeError>
            {
                if #has_own_keys || #base_keyed {
                    #base_key
                    #(#key_fields)*
                } else {
                    #base_all
                    #(#all_key_fields)*
                }
                ::core::result::Result::Ok(())
            }

            #[doc(hidden)]
            pub fn __cdr_encode_key_sample_members(&self, e: &mut ::ferrodds_cdr::Encoder<'_>)
                -> ::core::result::Result<(), ::ferrodds_cdr::EncodeError>
            {
                #key_sample_base
                #(#key_sample_fields)*
                ::core::result::Result::Ok(())
            }

            #[doc(hidden)]
            pub fn __cdr_decode_key_sample_members(d: &mut ::ferrodds_cdr::Decoder<'_>)
                -> ::core::result::Result<Self, ::ferrodds_cdr::DecodeError>
            {
                ::core::result::Result::Ok(Self { #decode_key_sample_base #(#decode_key_sample_fields)* })
            }

            #[doc(hidden)]
            pub fn __cdr_key_max_end(offset: usize, max_align: usize) -> ::core::option::Option<usize> {
                let mut end = offset;
                if #has_own_keys || #base_keyed {
                    #base_key_max
                    #(#key_max_keys)*
                } else {
                    #base_all_max
                    #(#key_max_all)*
                }
                ::core::option::Option::Some(end)
            }

            #[doc(hidden)]
            pub fn __cdr_members_max_end(offset: usize, max_align: usize) -> ::core::option::Option<usize> {
                let mut end = offset;
                #base_members_max
                #(#members_max)*
                ::core::option::Option::Some(end)
            }

            #[doc(hidden)]
            pub fn __cdr_json_members(&self, map: &mut ::ferrodds_cdr::serde_json::Map<::std::string::String, ::ferrodds_cdr::serde_json::Value>) {
                #json_out_base
                #(#json_out)*
            }

            #[doc(hidden)]
            pub fn __cdr_from_json_members(object: &::ferrodds_cdr::serde_json::Map<::std::string::String, ::ferrodds_cdr::serde_json::Value>)
                -> ::core::result::Result<Self, ::ferrodds_cdr::JsonError>
            {
                ::core::result::Result::Ok(Self { #json_in_base #(#json_in)* })
            }
        }

        impl ::ferrodds_cdr::Cdr for #name {
            const TYPE_NAME: &'static str = #type_name;
            const KIND: ::ferrodds_cdr::TypeKind = ::ferrodds_cdr::TypeKind::Struct(#ext_tokens);
            const MIN_SIZE: usize = #min_size;
            const IS_KEYED: bool = #has_own_keys || #base_keyed;

            fn dynamic_type() -> ::ferrodds_cdr::dynamic::DynamicType {
                static TYPE: ::std::sync::OnceLock<::ferrodds_cdr::dynamic::DynamicType> =
                    ::std::sync::OnceLock::new();
                ::std::thread_local! {
                    static BUILDING: ::core::cell::Cell<bool> = const { ::core::cell::Cell::new(false) };
                }
                ::ferrodds_cdr::dynamic::cached(&TYPE, &BUILDING, #type_name, || {
                    ::ferrodds_cdr::dynamic::DynamicType::Struct(::std::sync::Arc::new(
                        ::ferrodds_cdr::dynamic::StructType {
                            name: #type_name.into(),
                            extensibility: #ext_tokens,
                            base: #dynamic_base,
                            members: ::std::vec![#(#dynamic_members),*],
                        },
                    ))
                })
            }

            #[inline]
            fn encode(&self, e: &mut ::ferrodds_cdr::Encoder<'_>) -> ::core::result::Result<(), ::ferrodds_cdr::EncodeError> {
                let dheader = ::ferrodds_cdr::member::begin_aggregate(e, #ext_tokens);
                self.__cdr_encode_members(e)?;
                ::ferrodds_cdr::member::end_aggregate(e, #ext_tokens, dheader)
            }

            #[inline]
            fn decode(d: &mut ::ferrodds_cdr::Decoder<'_>) -> ::core::result::Result<Self, ::ferrodds_cdr::DecodeError> {
                #decode_body
            }

            #decode_into_item

            fn encode_key(&self, e: &mut ::ferrodds_cdr::Encoder<'_>) -> ::core::result::Result<(), ::ferrodds_cdr::EncodeError> {
                self.__cdr_encode_key_members(e)
            }

            fn key_max_end(offset: usize, max_align: usize) -> ::core::option::Option<usize> {
                Self::__cdr_key_max_end(offset, max_align)
            }

            fn encode_key_sample(&self, e: &mut ::ferrodds_cdr::Encoder<'_>) -> ::core::result::Result<(), ::ferrodds_cdr::EncodeError> {
                if !<Self as ::ferrodds_cdr::Cdr>::IS_KEYED {
                    return ::ferrodds_cdr::Cdr::encode(self, e);
                }
                let dheader = ::ferrodds_cdr::member::begin_aggregate(e, #ext_tokens);
                self.__cdr_encode_key_sample_members(e)?;
                ::ferrodds_cdr::member::end_aggregate(e, #ext_tokens, dheader)
            }

            fn decode_key_sample(d: &mut ::ferrodds_cdr::Decoder<'_>) -> ::core::result::Result<Self, ::ferrodds_cdr::DecodeError> {
                #decode_key_sample_body
            }

            fn max_end(offset: usize, max_align: usize) -> ::core::option::Option<usize> {
                #max_end_body
            }

            fn missing() -> ::core::option::Option<Self> {
                ::core::option::Option::Some(Self { #missing_base #(#missing_fields)* })
            }
        }

        impl ::ferrodds_cdr::JsonView for #name {
            fn to_json(&self) -> ::ferrodds_cdr::serde_json::Value {
                let mut map = ::ferrodds_cdr::serde_json::Map::new();
                self.__cdr_json_members(&mut map);
                ::ferrodds_cdr::serde_json::Value::Object(map)
            }

            fn from_json(value: &::ferrodds_cdr::serde_json::Value) -> ::core::result::Result<Self, ::ferrodds_cdr::JsonError> {
                let object = ::ferrodds_cdr::expect_object(value, #type_name)?;
                Self::__cdr_from_json_members(object)
            }
        }
    })
}

fn is_optional(m: &Member) -> bool {
    m.optional
}

fn is_string(ty: &Type) -> bool {
    matches!(ty, Type::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == "String"))
}

fn encode_value(m: &Member, access: TokenStream) -> TokenStream {
    match (m.attrs.bound, vec_inner(m.value_ty)) {
        (Some(b), Some(_)) => {
            quote! { ::ferrodds_cdr::member::encode_bounded_sequence(#access, #b, e) }
        }
        (Some(b), None) => quote! { ::ferrodds_cdr::member::encode_bounded_string(#access, #b, e) },
        (None, _) => quote! { ::ferrodds_cdr::Cdr::encode(#access, e) },
    }
}

fn decode_value(m: &Member) -> TokenStream {
    let vt = m.value_ty;
    match (m.attrs.bound, vec_inner(vt)) {
        (Some(b), Some(inner)) => {
            quote! { ::ferrodds_cdr::member::decode_sequence::<#inner>(d, ::core::option::Option::Some(#b)) }
        }
        (Some(b), None) => quote! { ::ferrodds_cdr::member::decode_bounded_string(d, #b) },
        (None, _) => quote! { <#vt as ::ferrodds_cdr::Cdr>::decode(d) },
    }
}

/// Reads a member into `place` (`&mut` of the member), reusing its memory.
fn decode_value_into(m: &Member, place: TokenStream) -> TokenStream {
    let vt = m.value_ty;
    match (m.attrs.bound, vec_inner(vt)) {
        (Some(b), Some(inner)) => {
            quote! { ::ferrodds_cdr::member::decode_sequence_into::<#inner>(d, ::core::option::Option::Some(#b), #place) }
        }
        (Some(b), None) => quote! {
            ::ferrodds_cdr::member::decode_bounded_string(d, #b).map(|v| *#place = v)
        },
        (None, _) => quote! { <#vt as ::ferrodds_cdr::Cdr>::decode_into(#place, d) },
    }
}

fn max_value(m: &Member) -> TokenStream {
    let vt = m.value_ty;
    match (m.attrs.bound, vec_inner(vt)) {
        (Some(b), Some(inner)) => {
            quote! { ::ferrodds_cdr::member::bounded_sequence_max_end::<#inner>(end, #b, max_align) }
        }
        (Some(b), None) => {
            quote! { ::ferrodds_cdr::member::bounded_string_max_end(end, #b, max_align) }
        }
        (None, _) => quote! { <#vt as ::ferrodds_cdr::Cdr>::max_end(end, max_align) },
    }
}

fn key_max_value(m: &Member) -> TokenStream {
    let vt = m.value_ty;
    match m.attrs.bound {
        Some(_) => max_value(m),
        None => quote! { <#vt as ::ferrodds_cdr::Cdr>::key_max_end(end, max_align) },
    }
}

fn missing_value(m: &Member, type_name: &str) -> TokenStream {
    let vt = m.value_ty;
    let n = &m.name;
    if is_optional(m) {
        quote! { ::core::option::Option::None }
    } else {
        quote! {
            <#vt as ::ferrodds_cdr::Cdr>::missing()
                .ok_or_else(|| ::ferrodds_cdr::member::missing_member(d, #type_name, #n))?
        }
    }
}

/// The path of the hidden slots struct of a base type `a::b::Base`: `a::b::__CdrSlots_Base`.
fn slots_path(ty: &Type) -> syn::Result<syn::Path> {
    let Type::Path(p) = ty else {
        return Err(syn::Error::new_spanned(
            ty,
            "a base struct must be named by a path",
        ));
    };
    let mut path = p.path.clone();
    let last = path
        .segments
        .last_mut()
        .ok_or_else(|| syn::Error::new_spanned(ty, "a base struct must be named by a path"))?;
    last.ident = format_ident!("__CdrSlots_{}", last.ident);
    Ok(path)
}

fn expand_transparent(
    input: &DeriveInput,
    data: &DataStruct,
    container: &Container,
) -> syn::Result<TokenStream> {
    let name = &input.ident;
    let Fields::Unnamed(fields) = &data.fields else {
        return Err(syn::Error::new_spanned(
            name,
            "#[cdr(bitmask)] needs a tuple struct with one field",
        ));
    };
    if fields.unnamed.len() != 1 {
        return Err(syn::Error::new_spanned(
            name,
            "#[cdr(bitmask)] needs a tuple struct with one field",
        ));
    }
    let Some(inner) = fields.unnamed.first().map(|f| &f.ty) else {
        return Err(syn::Error::new_spanned(
            name,
            "#[cdr(bitmask)] needs a tuple struct with one field",
        ));
    };
    let type_name = container
        .type_name
        .clone()
        .unwrap_or_else(|| name.to_string());
    let flag_names = &container.flags;
    let flag_positions: Vec<u16> = (0..container.flags.len() as u16).collect();
    let bit_bound = match container.bit_bound {
        Some(b) => quote!(#b),
        None => quote!((<#inner as ::ferrodds_cdr::Cdr>::KIND.primitive_size() * 8) as u32),
    };
    let dynamic = if container.bitmask {
        quote! {
            ::ferrodds_cdr::dynamic::DynamicType::Bitmask(::std::sync::Arc::new(
                ::ferrodds_cdr::dynamic::BitmaskType {
                    name: #type_name.into(),
                    bit_bound: #bit_bound,
                    flags: ::std::vec![#((#flag_names.into(), #flag_positions)),*],
                },
            ))
        }
    } else {
        quote! { <#inner as ::ferrodds_cdr::Cdr>::dynamic_type() }
    };
    let kind = if container.bitmask {
        quote! { ::ferrodds_cdr::TypeKind::Enumerated { size: <#inner as ::ferrodds_cdr::Cdr>::KIND.primitive_size() } }
    } else {
        quote! { <#inner as ::ferrodds_cdr::Cdr>::KIND }
    };
    Ok(quote! {
        impl ::ferrodds_cdr::Cdr for #name {
            const TYPE_NAME: &'static str = #type_name;
            const KIND: ::ferrodds_cdr::TypeKind = #kind;
            const MIN_SIZE: usize = <#inner as ::ferrodds_cdr::Cdr>::MIN_SIZE;

            fn dynamic_type() -> ::ferrodds_cdr::dynamic::DynamicType {
                #dynamic
            }

            #[inline]
            fn encode(&self, e: &mut ::ferrodds_cdr::Encoder<'_>) -> ::core::result::Result<(), ::ferrodds_cdr::EncodeError> {
                ::ferrodds_cdr::Cdr::encode(&self.0, e)
            }
            #[inline]
            fn decode(d: &mut ::ferrodds_cdr::Decoder<'_>) -> ::core::result::Result<Self, ::ferrodds_cdr::DecodeError> {
                <#inner as ::ferrodds_cdr::Cdr>::decode(d).map(#name)
            }
            fn max_end(offset: usize, max_align: usize) -> ::core::option::Option<usize> {
                <#inner as ::ferrodds_cdr::Cdr>::max_end(offset, max_align)
            }
            fn missing() -> ::core::option::Option<Self> {
                <#inner as ::ferrodds_cdr::Cdr>::missing().map(#name)
            }
        }

        impl ::ferrodds_cdr::JsonView for #name {
            fn to_json(&self) -> ::ferrodds_cdr::serde_json::Value {
                ::ferrodds_cdr::JsonView::to_json(&self.0)
            }
            fn from_json(value: &::ferrodds_cdr::serde_json::Value) -> ::core::result::Result<Self, ::ferrodds_cdr::JsonError> {
                <#inner as ::ferrodds_cdr::JsonView>::from_json(value).map(#name)
            }
        }
    })
}
