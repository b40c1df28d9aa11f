//! Typed, pre-downcast views of the Arrow columns of a checkpoint, so that turning a million
//! rows into actions does one downcast per batch instead of one per value.
//!
//! Checkpoint writers differ in physical types (Utf8 / LargeUtf8 / Utf8View, Int32 / Int64
//! for the same field, missing optional columns); every view here accepts all of them and
//! reads a missing column as null, as the protocol requires.

use arrow_array::cast::AsArray;
use arrow_array::types::{Int8Type, Int16Type, Int32Type, Int64Type};
use arrow_array::{Array, ArrayRef, BooleanArray, GenericListArray, MapArray, StructArray};
use arrow_schema::DataType;

use crate::actions::OptStringMap;

/// A child column of a struct, by name.
pub(crate) fn child<'a>(parent: &'a StructArray, name: &str) -> Option<&'a ArrayRef> {
    parent.column_by_name(name)
}

/// A nullable struct column.
pub(crate) struct StructCol<'a>(pub Option<&'a StructArray>);

impl<'a> StructCol<'a> {
    pub(crate) fn of(a: Option<&'a ArrayRef>) -> Self {
        StructCol(a.and_then(|a| a.as_struct_opt()))
    }

    pub(crate) fn field(&self, name: &str) -> Option<&'a ArrayRef> {
        self.0.and_then(|s| child(s, name))
    }

    pub(crate) fn valid(&self, i: usize) -> bool {
        self.0.is_some_and(|s| s.is_valid(i))
    }

    pub(crate) fn string(&self, name: &str) -> StrCol<'a> {
        StrCol::of(self.field(name))
    }

    pub(crate) fn int(&self, name: &str) -> IntCol<'a> {
        IntCol::of(self.field(name))
    }

    pub(crate) fn boolean(&self, name: &str) -> BoolCol<'a> {
        BoolCol::of(self.field(name))
    }

    pub(crate) fn map(&self, name: &str) -> MapCol<'a> {
        MapCol::of(self.field(name))
    }

    pub(crate) fn strings(&self, name: &str) -> StrListCol<'a> {
        StrListCol::of(self.field(name))
    }

    pub(crate) fn strukt(&self, name: &str) -> StructCol<'a> {
        StructCol::of(self.field(name))
    }
}

/// A string column of any Arrow string flavour.
pub(crate) enum StrCol<'a> {
    Utf8(&'a arrow_array::StringArray),
    Large(&'a arrow_array::LargeStringArray),
    View(&'a arrow_array::StringViewArray),
    Missing,
}

impl<'a> StrCol<'a> {
    pub(crate) fn of(a: Option<&'a ArrayRef>) -> Self {
        let Some(a) = a else { return StrCol::Missing };
        match a.data_type() {
            DataType::Utf8 => StrCol::Utf8(a.as_string::<i32>()),
            DataType::LargeUtf8 => StrCol::Large(a.as_string::<i64>()),
            DataType::Utf8View => StrCol::View(a.as_string_view()),
            _ => StrCol::Missing,
        }
    }

    pub(crate) fn get(&self, i: usize) -> Option<&'a str> {
        match self {
            StrCol::Utf8(a) => a.is_valid(i).then(|| a.value(i)),
            StrCol::Large(a) => a.is_valid(i).then(|| a.value(i)),
            StrCol::View(a) => a.is_valid(i).then(|| a.value(i)),
            StrCol::Missing => None,
        }
    }
}

/// An integer column of any signed width.
pub(crate) struct IntCol<'a>(Option<&'a ArrayRef>);

impl<'a> IntCol<'a> {
    pub(crate) fn of(a: Option<&'a ArrayRef>) -> Self {
        IntCol(a.filter(|a| {
            matches!(
                a.data_type(),
                DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64
            )
        }))
    }

    pub(crate) fn get(&self, i: usize) -> Option<i64> {
        let a = self.0?;
        if a.is_null(i) {
            return None;
        }
        Some(match a.data_type() {
            DataType::Int64 => a.as_primitive::<Int64Type>().value(i),
            DataType::Int32 => i64::from(a.as_primitive::<Int32Type>().value(i)),
            DataType::Int16 => i64::from(a.as_primitive::<Int16Type>().value(i)),
            DataType::Int8 => i64::from(a.as_primitive::<Int8Type>().value(i)),
            _ => return None,
        })
    }
}

/// A boolean column.
pub(crate) struct BoolCol<'a>(Option<&'a BooleanArray>);

impl<'a> BoolCol<'a> {
    pub(crate) fn of(a: Option<&'a ArrayRef>) -> Self {
        BoolCol(a.and_then(|a| a.as_boolean_opt()))
    }

    pub(crate) fn get(&self, i: usize) -> Option<bool> {
        self.0.and_then(|a| a.is_valid(i).then(|| a.value(i)))
    }
}

/// A `map<string,string>` column.
pub(crate) struct MapCol<'a>(Option<(&'a MapArray, StrCol<'a>, StrCol<'a>)>);

impl<'a> MapCol<'a> {
    pub(crate) fn of(a: Option<&'a ArrayRef>) -> Self {
        let Some(map) = a.and_then(|a| a.as_map_opt()) else {
            return MapCol(None);
        };
        let keys = StrCol::of(Some(map.keys()));
        let values = StrCol::of(Some(map.values()));
        MapCol(Some((map, keys, values)))
    }

    pub(crate) fn get(&self, i: usize) -> Option<OptStringMap> {
        let (map, keys, values) = self.0.as_ref()?;
        if map.is_null(i) {
            return None;
        }
        let offsets = map.value_offsets();
        let (start, end) = (offsets[i] as usize, offsets[i + 1] as usize);
        let mut out = Vec::with_capacity(end - start);
        for j in start..end {
            if let Some(k) = keys.get(j) {
                out.push((k.to_string(), values.get(j).map(str::to_string)));
            }
        }
        Some(OptStringMap(out))
    }

    /// Whether row `i` holds a map (possibly empty).
    pub(crate) fn is_valid(&self, i: usize) -> bool {
        self.0.as_ref().is_some_and(|(map, _, _)| map.is_valid(i))
    }

    /// Whether [`MapCol::get`] of row `i` would equal `expected`, read in place (no map
    /// built).
    pub(crate) fn holds_exactly(&self, i: usize, expected: &OptStringMap) -> bool {
        let Some((map, keys, values)) = self.0.as_ref() else {
            return false;
        };
        let offsets = map.value_offsets();
        let (Some(&start), Some(&end)) = (offsets.get(i), offsets.get(i + 1)) else {
            return false;
        };
        if map.is_null(i) {
            return false;
        }
        let mut want = expected.0.iter();
        for j in start as usize..end as usize {
            // `get` skips entries without a key.
            let Some(k) = keys.get(j) else { continue };
            match want.next() {
                Some((wk, wv)) if wk == k && wv.as_deref() == values.get(j) => {}
                _ => return false,
            }
        }
        want.next().is_none()
    }
}

/// An `array<string>` column.
pub(crate) enum StrListCol<'a> {
    List(&'a GenericListArray<i32>, StrCol<'a>),
    Large(&'a GenericListArray<i64>, StrCol<'a>),
    Missing,
}

impl<'a> StrListCol<'a> {
    pub(crate) fn of(a: Option<&'a ArrayRef>) -> Self {
        let Some(a) = a else {
            return StrListCol::Missing;
        };
        if let Some(l) = a.as_list_opt::<i32>() {
            return StrListCol::List(l, StrCol::of(Some(l.values())));
        }
        if let Some(l) = a.as_list_opt::<i64>() {
            return StrListCol::Large(l, StrCol::of(Some(l.values())));
        }
        StrListCol::Missing
    }

    /// Whether row `i` holds a list (possibly empty).
    pub(crate) fn is_valid(&self, i: usize) -> bool {
        match self {
            StrListCol::List(l, _) => l.is_valid(i),
            StrListCol::Large(l, _) => l.is_valid(i),
            StrListCol::Missing => false,
        }
    }

    pub(crate) fn get(&self, i: usize) -> Option<Vec<String>> {
        let (valid, range, values) = match self {
            StrListCol::List(l, v) => (
                l.is_valid(i),
                l.value_offsets()[i] as usize..l.value_offsets()[i + 1] as usize,
                v,
            ),
            StrListCol::Large(l, v) => (
                l.is_valid(i),
                l.value_offsets()[i] as usize..l.value_offsets()[i + 1] as usize,
                v,
            ),
            StrListCol::Missing => return None,
        };
        valid.then(|| {
            range
                .filter_map(|j| values.get(j).map(str::to_string))
                .collect()
        })
    }
}
