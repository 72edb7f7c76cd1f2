//! Structured mutations of real scenarios: a scenario is a JSON tree, a mutation picks a
//! node of it and replaces it with an extreme number, a unit string at the edge of its
//! range, a value of the wrong type, another node's value, or removes it, duplicates it
//! or adds an unknown field beside it. Several mutations stack.

use serde_json::{Map, Value};

/// One mutation: `at` picks the node (modulo the node count, in document order), `kind`
/// what happens to it, `pick` the replacement from the tables below.
#[derive(Clone, Copy, Debug)]
pub struct Mutation {
    pub at: u32,
    pub kind: u8,
    pub pick: u32,
}

pub const KINDS: u8 = 8;

const NUMBERS: &[f64] = &[
    0.0,
    -1.0,
    1.0,
    0.5,
    1e-300,
    -1e-9,
    2.0,
    255.0,
    65535.0,
    65536.0,
    4294967295.0,
    4294967296.0,
    1e12,
    9007199254740993.0,
    18446744073709551615.0,
    1e300,
    -1e300,
];

const INTEGERS: &[i128] = &[0, -1, 1, 2, 1025, 4294967296, 1_000_000_000_000, i64::MAX as i128, u64::MAX as i128];

const STRINGS: &[&str] = &[
    "",
    "0s",
    "1ns",
    "1us",
    "-5ms",
    "1e12s",
    "1000000000000s",
    "18446744073709551615s",
    "3153600001s",
    "NaNs",
    "infs",
    "0bps",
    "1bps",
    "1e30Gbps",
    "18446744073709551615bps",
    "0B",
    "1B",
    "27B",
    "65536B",
    "18446744073709551615B",
    "1e300MB",
    "0pkt",
    "1pkt",
    "4294967296pkt",
    "0.5pkt",
    "../../escaped",
    "/dev/null",
    "a b",
    "tcp",
    "udp",
    "router",
    "host",
    "bulk",
    "cbr",
    "file",
    "bernoulli",
    "gilbert_elliott",
    "jakes",
    "none",
    "fixed",
    "koga",
    "clamp",
    "realtime",
    "a_to_b",
    "\u{0}",
    "é",
];

/// Every node of the tree, as a path of keys and indices, in document order.
#[derive(Clone, Debug)]
enum Step {
    Key(String),
    Index(usize),
}

fn paths(v: &Value, prefix: &mut Vec<Step>, out: &mut Vec<Vec<Step>>) {
    out.push(prefix.clone());
    match v {
        Value::Object(m) => {
            for (k, child) in m {
                prefix.push(Step::Key(k.clone()));
                paths(child, prefix, out);
                prefix.pop();
            }
        }
        Value::Array(a) => {
            for (i, child) in a.iter().enumerate() {
                prefix.push(Step::Index(i));
                paths(child, prefix, out);
                prefix.pop();
            }
        }
        _ => {}
    }
}

fn get<'a>(v: &'a Value, path: &[Step]) -> &'a Value {
    path.iter().fold(v, |v, s| match s {
        Step::Key(k) => &v[k.as_str()],
        Step::Index(i) => &v[*i],
    })
}

fn get_mut<'a>(v: &'a mut Value, path: &[Step]) -> &'a mut Value {
    path.iter().fold(v, |v, s| match s {
        Step::Key(k) => &mut v[k.as_str()],
        Step::Index(i) => &mut v[*i],
    })
}

fn number(pick: u32) -> Value {
    let p = pick as usize;
    let (integer, p) = (p & 1 == 0, p >> 1);
    if integer {
        let i = INTEGERS[p % INTEGERS.len()];
        match (u64::try_from(i), i64::try_from(i)) {
            (Ok(u), _) => Value::from(u),
            (_, Ok(s)) => Value::from(s),
            _ => Value::from(0),
        }
    } else {
        serde_json::Number::from_f64(NUMBERS[p % NUMBERS.len()]).map_or(Value::Null, Value::Number)
    }
}

/// A unit string at the edge of its range, or a number spelled with the node's own unit.
fn string(pick: u32, current: &Value) -> Value {
    let p = pick as usize;
    if let (Some(s), 0) = (current.as_str(), p % 3) {
        let unit: String = s.chars().skip_while(|c| c.is_ascii_digit() || *c == '.').collect();
        let magnitudes = ["0", "1", "0.000001", "1e12", "4294967296", "18446744073709551616", "99999999999999999999"];
        return Value::from(format!("{}{unit}", magnitudes[p / 3 % magnitudes.len()]));
    }
    Value::from(STRINGS[p % STRINGS.len()])
}

fn wrong_type(pick: u32) -> Value {
    match pick % 5 {
        0 => Value::Bool(pick % 2 == 1),
        1 => Value::Array(vec![]),
        2 => Value::Object(Map::new()),
        3 => Value::Array(vec![Value::from(1), Value::from("x")]),
        _ => Value::Null,
    }
}

/// Apply `m` to `doc`. Null stays: Python's None arrives as JSON null.
pub fn apply(doc: &mut Value, m: Mutation) {
    let mut all = Vec::new();
    paths(doc, &mut Vec::new(), &mut all);
    let path = all[m.at as usize % all.len()].clone();
    let other = get(doc, &all[m.pick as usize % all.len()]).clone();
    let (parent, last) = match path.split_last() {
        Some((last, parent)) => (parent.to_vec(), Some(last.clone())),
        None => (vec![], None),
    };
    match m.kind % KINDS {
        0 => *get_mut(doc, &path) = number(m.pick),
        1 => {
            let current = get(doc, &path).clone();
            *get_mut(doc, &path) = string(m.pick, &current);
        }
        2 => *get_mut(doc, &path) = wrong_type(m.pick),
        3 => match (get_mut(doc, &parent), last) {
            (Value::Object(o), Some(Step::Key(k))) => {
                o.remove(&k);
            }
            (Value::Array(a), Some(Step::Index(i))) => {
                a.remove(i);
            }
            _ => {}
        },
        4 => match (get_mut(doc, &parent), last) {
            (Value::Array(a), Some(Step::Index(i))) => {
                let copy = a[i].clone();
                a.push(copy);
            }
            (Value::Object(o), _) => {
                o.insert(format!("unknown_{}", m.pick % 3), Value::from(1));
            }
            _ => {}
        },
        5 => *get_mut(doc, &path) = other,
        6 => {
            // Scale a number: the same field far out of its usual range.
            let v = get_mut(doc, &path);
            if let Some(x) = v.as_f64() {
                let factor = [1e6, -1.0, 1e-6, 0.0, 1e18][m.pick as usize % 5];
                *v = serde_json::Number::from_f64(x * factor).map_or(Value::from(0), Value::Number);
            } else {
                *v = number(m.pick);
            }
        }
        _ => {
            // Remove a whole top-level section (or an element of one).
            if let Value::Object(o) = doc {
                let keys: Vec<String> = o.keys().cloned().collect();
                if !keys.is_empty() {
                    o.remove(&keys[m.pick as usize % keys.len()]);
                }
            }
        }
    }
}
