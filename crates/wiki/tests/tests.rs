//! Integration tests of archgate-wiki: one test binary, one module per topic.

mod it;
