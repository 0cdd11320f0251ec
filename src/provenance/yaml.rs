//! Untrusted YAML, parsed with a bound on its expanded size.
//!
//! `serde_norway` limits how many aliases it replays (100 a parser event) and how deep a
//! document nests (128), not how many nodes the replays build: a 17 KB document whose 1,000-item
//! anchored list is referenced 5,000 times builds five million nodes (544 MB and 17 s in a debug
//! build, issue 37). So a document is first walked by a visitor that allocates nothing and counts
//! every node it is given, an alias counting its anchor's nodes each time it is replayed, and stops
//! at the budget; only a document within it is built into a [`Value`].

use std::cell::Cell;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess, Visitor};
use serde_norway::Value;

/// Why a document was not built.
#[derive(Debug)]
pub enum YamlError {
    /// It expands to more nodes than the budget; nothing past the budget was read.
    TooManyNodes,
    /// The parser refused it (syntax, nesting past 128, alias replays past its own limit).
    Parse(serde_norway::Error),
}

/// Parses one YAML document into a [`Value`] when it expands to at most `max_nodes` nodes
/// (scalars, sequences and mappings; keys count).
pub fn parse(text: &str, max_nodes: u64) -> Result<Value, YamlError> {
    let budget = Budget {
        left: Cell::new(max_nodes),
        spent: Cell::new(false),
    };
    match Count(&budget).deserialize(serde_norway::Deserializer::from_str(text)) {
        Ok(()) => serde_norway::from_str(text).map_err(YamlError::Parse),
        Err(_) if budget.spent.get() => Err(YamlError::TooManyNodes),
        Err(e) => Err(YamlError::Parse(e)),
    }
}

/// Nodes still allowed, and whether the walk stopped because there were none left (told apart
/// from the parser's own errors without reading their messages).
struct Budget {
    left: Cell<u64>,
    spent: Cell<bool>,
}

/// A visitor that counts nodes and keeps nothing.
#[derive(Clone, Copy)]
struct Count<'a>(&'a Budget);

impl Count<'_> {
    fn node<E: de::Error>(self) -> Result<(), E> {
        let left = self.0.left.get();
        if left == 0 {
            self.0.spent.set(true);
            return Err(E::custom("YAML document expands past the node budget"));
        }
        self.0.left.set(left - 1);
        Ok(())
    }
}

impl<'de> DeserializeSeed<'de> for Count<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Count<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML value")
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        self.node()
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        self.node()
    }

    fn visit_i128<E: de::Error>(self, _: i128) -> Result<(), E> {
        self.node()
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        self.node()
    }

    fn visit_u128<E: de::Error>(self, _: u128) -> Result<(), E> {
        self.node()
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        self.node()
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        self.node()
    }

    fn visit_bytes<E: de::Error>(self, _: &[u8]) -> Result<(), E> {
        self.node()
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.node()
    }

    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        self.node()
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        self.node()?;
        while seq.next_element_seed(self)?.is_some() {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        self.node()?;
        while map.next_key_seed(self)?.is_some() {
            map.next_value_seed(self)?;
        }
        Ok(())
    }

    /// A tagged node (`!Thing value`): the parser hands it over as an enum whose variant is the
    /// tag, as it does when it builds a `Value`.
    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<(), A::Error> {
        self.node()?;
        let (_tag, contents) = data.variant::<String>()?;
        de::VariantAccess::newtype_variant_seed(contents, self)
    }
}

/// Test input for the callers' tests.
#[cfg(test)]
/// A list of `items` anchored once and referenced `refs` times: `items * refs` nodes from a
/// text of a few bytes a reference.
pub fn alias_bomb(items: usize, refs: usize) -> String {
    let mut s = String::from("base: &a\n");
    for i in 0..items {
        s.push_str(&format!("  - item{i}\n"));
    }
    s.push_str("refs:\n");
    for _ in 0..refs {
        s.push_str("  - *a\n");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_alias_bomb_is_refused_before_it_is_built() {
        let bomb = alias_bomb(1000, 5000);
        assert!(bomb.len() < 64 * 1024);
        assert!(matches!(
            parse(&bomb, 1_000_000),
            Err(YamlError::TooManyNodes)
        ));
    }

    #[test]
    fn anchors_within_the_budget_parse_and_expand() {
        let yaml = "defaults: &d\n  lr: 0.1\n  tags: [a, b]\ntrain:\n  <<: *d\n  epochs: 3\neval: *d\nx: !Thing {k: v}\n";
        let v = parse(yaml, 1_000_000).unwrap();
        assert_eq!(v["eval"]["tags"][1].as_str(), Some("b"));
        assert_eq!(v["train"]["epochs"].as_u64(), Some(3));
        // The root and its 4 keys; the anchored map of 7 (map, 2 keys, 0.1, a list of 2);
        // `train`: map, `<<`, the 7 again, `epochs`, 3; `eval`: the 7 again; the tagged node
        // and its map of 2.
        let nodes = 5 + 7 + 11 + 7 + 4;
        assert!(parse(yaml, nodes).is_ok());
        assert!(matches!(
            parse(yaml, nodes - 1),
            Err(YamlError::TooManyNodes)
        ));
    }

    #[test]
    fn the_budget_counts_every_replay_of_an_alias() {
        let yaml = alias_bomb(10, 10);
        // The root, 2 keys, the anchored list and its 10 items, the `refs` list, 10 replays of
        // 11 nodes.
        let nodes = 1 + 2 + 11 + 1 + 10 * 11;
        assert!(parse(&yaml, nodes).is_ok());
        assert!(matches!(
            parse(&yaml, nodes - 1),
            Err(YamlError::TooManyNodes)
        ));
    }

    #[test]
    fn parser_errors_are_its_own() {
        assert!(matches!(parse("a: [", 100), Err(YamlError::Parse(_))));
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        match parse(&deep, 1_000_000) {
            Err(YamlError::Parse(e)) => {
                assert!(e.to_string().starts_with("recursion limit exceeded"))
            }
            other => panic!("{other:?}"),
        }
    }
}
