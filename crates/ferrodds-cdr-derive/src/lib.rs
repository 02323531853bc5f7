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
    result.unwrap_or_else(syn::Error::into_compile_error).into()
}
