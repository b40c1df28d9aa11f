//! "Did you mean": the known name nearest to a misspelt one (a column at bind time, a
//! function at parse time), by edit distance.

/// Edit distance between `a` and `b`, ignoring ASCII case: insertions, deletions,
/// substitutions and transpositions of adjacent characters each count one (the common
/// typing slips: `nmae` for `name`, `lowr` for `lower`).
fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().map(|c| c.to_ascii_lowercase()).collect();
    let b: Vec<char> = b.chars().map(|c| c.to_ascii_lowercase()).collect();
    // Three rows of the dynamic programme: two back for transpositions.
    let mut before: Vec<usize> = vec![0; b.len() + 1];
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        current[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut d = (previous[j] + 1)
                .min(current[j - 1] + 1)
                .min(previous[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(before[j - 2] + 1);
            }
            current[j] = d;
        }
        std::mem::swap(&mut before, &mut previous);
        std::mem::swap(&mut previous, &mut current);
    }
    previous[b.len()]
}

/// The candidate nearest to `word`, if it is close enough to be what was meant: at most
/// one edit for short words, and about a third of the word's length for longer ones. On a
/// tie the first candidate wins, so callers list candidates in a meaningful order.
/// (Public as `nearest_name`, for callers that resolve names of their own, such as
/// MERGE's `t.`/`s.` qualification.)
pub fn nearest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let limit = (word.chars().count() / 3).max(1);
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        let d = distance(word, c);
        if d <= limit && best.is_none_or(|(b, _)| d < b) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_names_by_edit_distance() {
        assert_eq!(distance("nmae", "name"), 1);
        assert_eq!(distance("lowr", "lower"), 1);
        assert_eq!(distance("", "abc"), 3);
        assert_eq!(distance("kitten", "sitting"), 3);
        assert_eq!(distance("ID", "id"), 0);
        let columns = ["id", "name", "region", "amount"];
        assert_eq!(nearest("nmae", columns), Some("name"));
        assert_eq!(nearest("regoin", columns), Some("region"));
        assert_eq!(nearest("amout", columns), Some("amount"));
        assert_eq!(nearest("xyz", columns), None);
        assert_eq!(nearest("price", columns), None);
        let functions = ["lower", "upper", "length", "ltrim"];
        assert_eq!(nearest("lowr", functions), Some("lower"));
        assert_eq!(nearest("UPER", functions), Some("upper"));
        assert_eq!(nearest("lenght", functions), Some("length"));
    }
}
