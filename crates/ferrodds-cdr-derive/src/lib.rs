//! `#[derive(Cdr)]` for FerroDDS: generates `ferrodds_cdr::Cdr` and
//! `ferrodds_cdr::JsonView` for structs, enums, unions and bitmasks.
//!
//! Container attributes (`#[cdr(...)]` on the type):
//! - `final`, `appendable`, `mutable`: extensibility (default `final`, as Cyclone DDS's
//!   `idlc` defaults to);
//! - `type_name = "module::Name"`: the IDL name peers expect (default: the Rust name);
//! - `autoid = "hash"` or `"sequential"` (default): how member ids are assigned;
//! - `union, discriminator = T`: a Rust enum with data is an IDL union switching on `T`;
//! - `bit_bound = N`: an enum's size on the wire (8, 16 or 32 bits; default 32);
//! - `bitmask` (or `transparent`): a one-field tuple struct encoded as its field.
//!
//! Member attributes (on a field): `key`, `id = N`, `optional` (implied by an `Option<T>`
//! field), `must_understand`, `bound = N` (for `String` and `Vec<T>`), `name = "idl_name"`,
//! `base` (the first field holds the base struct of an IDL struct inheritance).
//!
//! Enumerator attributes: `name = "IDL_NAME"`; explicit discriminants (`Red = 5`) set values.
//! Union branch attributes: `case = EXPR` (repeatable), `default`, `name = "member"`. A
//! branch with one label holds just its value (or nothing); a branch with several labels or
//! the default branch holds `(discriminator, value)`, so that decoding and encoding again
//! gives the same bytes. In a union without a default branch, a `#[cdr(no_branch)]` variant
//! holding just the discriminator receives the values that select no branch (without one,
//! such a value is a decoding error).

use proc_macro::TokenStream;
use syn::{parse_macro_input, DeriveInput};

mod attrs;
mod enums;
mod structs;
mod unions;

/// Derives `ferrodds_cdr::Cdr` and `ferrodds_cdr::JsonView`; see the crate documentation
/// for the attributes.
#[proc_macro_derive(Cdr, attributes(cdr))]
pub fn derive_cdr(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    let result = match &input.data {
        syn::Data::Struct(data) => structs::expand(&input, data),
        syn::Data::Enum(data) => {
            match attrs::Container::parse(&input.attrs) {
                Ok(c) if c.union.is_some() => unions::expand(&input, data, c),
                Ok(c) => enums::expand(&input, data, c),
                Err(e) => Err(e),
            }
        }
        syn::Data::Union(u) => Err(syn::Error::new(
            u.union_token.span,
            "Cdr cannot be derived for a Rust union; write an IDL union as an enum with #[cdr(union, discriminator = T)]",
        )),
    };
    match result {
        Ok(tokens) => replace_crate_path(tokens, &cdr_crate_path()).into(),
        Err(e) => e.into_compile_error().into(),
    }
}

/// How the crate using the derive reaches `ferrodds-cdr`: directly, or through `ferrodds`
/// (which re-exports it), so that depending on `ferrodds` alone is enough.
fn cdr_crate_path() -> proc_macro2::TokenStream {
    use proc_macro_crate::{crate_name, FoundCrate};
    let named = |name: &str| {
        let ident =
            proc_macro2::Ident::new(&name.replace('-', "_"), proc_macro2::Span::call_site());
        quote::quote!(::#ident)
    };
    match crate_name("ferrodds-cdr") {
        // Inside ferrodds-cdr itself, `extern crate self as ferrodds_cdr` makes this work.
        Ok(FoundCrate::Itself) => quote::quote!(::ferrodds_cdr),
        Ok(FoundCrate::Name(name)) => named(&name),
        Err(_) => match crate_name("ferrodds") {
            Ok(FoundCrate::Name(name)) => {
                let base = named(&name);
                quote::quote!(#base::ferrodds_cdr)
            }
            Ok(FoundCrate::Itself) => quote::quote!(crate::ferrodds_cdr),
            Err(_) => quote::quote!(::ferrodds_cdr),
        },
    }
}

/// Replaces every `::ferrodds_cdr` in the generated code by `path`.
fn replace_crate_path(
    tokens: proc_macro2::TokenStream,
    path: &proc_macro2::TokenStream,
) -> proc_macro2::TokenStream {
    use proc_macro2::{Group, TokenTree};
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    let mut out = proc_macro2::TokenStream::new();
    let mut i = 0;
    while i < trees.len() {
        let is_path = matches!(
            (&trees[i], trees.get(i + 1), trees.get(i + 2)),
            (TokenTree::Punct(a), Some(TokenTree::Punct(b)), Some(TokenTree::Ident(id)))
                if a.as_char() == ':' && b.as_char() == ':' && id == "ferrodds_cdr"
        );
        if is_path {
            out.extend(path.clone());
            i += 3;
            continue;
        }
        match &trees[i] {
            TokenTree::Group(g) => {
                let mut ng = Group::new(g.delimiter(), replace_crate_path(g.stream(), path));
                ng.set_span(g.span());
                out.extend([TokenTree::Group(ng)]);
            }
            other => out.extend([other.clone()]),
        }
        i += 1;
    }
    out
}
