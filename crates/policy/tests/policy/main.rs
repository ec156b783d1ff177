//! The policy crate's behaviour as tables: one line per case (one integration-test binary).

mod budget;
mod decide;
mod grant;
mod nag;
mod privilege;
mod router;
mod rules;
mod standing;
