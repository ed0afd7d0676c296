//! Text widths from the advance widths of the DejaVu faces the PDF embeds: what the page
//! layout wraps and fits by, and what the clipping checks measure every table cell and
//! label against. A width here is the sum of the glyphs' horizontal advances (no kerning,
//! which only narrows DejaVu's pairs, so a measured width is never short of the drawn one),
//! with combining marks at zero (they sit on the character before them).

use std::sync::OnceLock;

/// One of the embedded faces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Face {
    /// DejaVu Sans.
    Sans,
    /// DejaVu Sans Bold.
    SansBold,
    /// DejaVu Sans Mono.
    Mono,
    /// DejaVu Sans Mono Bold.
    MonoBold,
}

impl Face {
    /// The face of an SVG `font-family` (monospace or not) and weight.
    pub fn of(mono: bool, bold: bool) -> Self {
        match (mono, bold) {
            (false, false) => Face::Sans,
            (false, true) => Face::SansBold,
            (true, false) => Face::Mono,
            (true, true) => Face::MonoBold,
        }
    }

    fn data(self) -> &'static [u8] {
        match self {
            Face::Sans => dejavu::sans::regular(),
            Face::SansBold => dejavu::sans::bold(),
            Face::Mono => dejavu::sans_mono::regular(),
            Face::MonoBold => dejavu::sans_mono::bold(),
        }
    }

    fn parsed(self) -> Option<&'static ttf_parser::Face<'static>> {
        static FACES: [OnceLock<Option<ttf_parser::Face<'static>>>; 4] = [
            OnceLock::new(),
            OnceLock::new(),
            OnceLock::new(),
            OnceLock::new(),
        ];
        FACES[self as usize]
            .get_or_init(|| ttf_parser::Face::parse(self.data(), 0).ok())
            .as_ref()
    }
}

/// Whether `c` is a combining mark (drawn on the character before it, no advance).
pub fn is_combining(c: char) -> bool {
    matches!(c as u32, 0x0300..=0x036F | 0x1AB0..=0x1AFF | 0x1DC0..=0x1DFF | 0x20D0..=0x20FF | 0xFE20..=0xFE2F)
}

/// The advance of `c` in `face`, in em. A character the face lacks is measured as the
/// widest of the face's digits' em (0.7 em: a fallback glyph is no wider in practice).
pub fn advance(c: char, face: Face) -> f64 {
    if is_combining(c) {
        return 0.0;
    }
    let Some(f) = face.parsed() else {
        return 0.7;
    };
    let upem = f64::from(f.units_per_em());
    f.glyph_index(c)
        .and_then(|g| f.glyph_hor_advance(g))
        .map_or(0.7, |a| f64::from(a) / upem)
}

/// The width of `text` in `face` at `size` (pt).
pub fn width(text: &str, face: Face, size: f64) -> f64 {
    text.chars().map(|c| advance(c, face)).sum::<f64>() * size
}

/// Whether `face` has a glyph for `c` (combining marks and spaces count as present).
pub fn has_glyph(c: char, face: Face) -> bool {
    c.is_whitespace()
        || face
            .parsed()
            .is_some_and(|f| f.glyph_index(c).is_some_and(|g| g.0 != 0))
}

/// The characters after which a word may break.
const BREAKS: [char; 6] = ['-', '+', '_', '/', ',', '='];

/// Whether a word may break after its character `k`: a break character between two
/// letters (or brackets) — "bertolazzi-|pendulum", "taylor+|projection" — and never inside
/// a number ("1.0e-3", "[order=4]").
fn good_break(chars: &[char], k: usize) -> bool {
    let word_like = |c: char| c.is_alphabetic() || matches!(c, '(' | ')' | '[' | ']');
    BREAKS.contains(&chars[k])
        && k > 0
        && k + 1 < chars.len()
        && word_like(chars[k - 1])
        && word_like(chars[k + 1])
}

/// `word` split after each of its good break places (see [`wrap`]).
pub fn pieces(word: &str) -> Vec<String> {
    let chars: Vec<char> = word.chars().collect();
    let mut out = Vec::new();
    let mut start = 0;
    for k in 0..chars.len() {
        if good_break(&chars, k) {
            out.push(chars[start..=k].iter().collect());
            start = k + 1;
        }
    }
    out.push(chars[start..].iter().collect());
    out
}

/// `text` wrapped into lines no wider than `max` pt in `face` at `size`: broken at spaces;
/// a word wider than a line broken after a `-`, `+`, `_`, `/`, `,` or `=` between letters
/// ("velocity-projection+|projection"), else after any of them, and only a word with none
/// cut between characters. No character is dropped: the lines joined (with a space where
/// a space was broken) give back `text`.
pub fn wrap(text: &str, face: Face, size: f64, max: f64) -> Vec<String> {
    let mut out = Vec::new();
    for para in text.split('\n') {
        let mut line = String::new();
        for word in para.split_whitespace() {
            let candidate = if line.is_empty() {
                word.to_string()
            } else {
                format!("{line} {word}")
            };
            if width(&candidate, face, size) <= max {
                line = candidate;
                continue;
            }
            if !line.is_empty() {
                out.push(std::mem::take(&mut line));
            }
            let mut pieces = break_word(word, face, size, max);
            line = pieces.pop().unwrap_or_default();
            out.extend(pieces);
        }
        out.push(line);
    }
    out
}

/// A word wider than `max` in pieces that fit: each piece ends at the last good break
/// place that keeps it within `max`, else after the last break character that does, else
/// at the last character that does (never before a combining mark).
fn break_word(word: &str, face: Face, size: f64, max: f64) -> Vec<String> {
    let mut pieces = Vec::new();
    let mut rest: Vec<char> = word.chars().collect();
    while width(&rest.iter().collect::<String>(), face, size) > max && rest.len() > 1 {
        // The longest prefix that fits (at least one character, and never a lone mark).
        let mut fit = 0;
        let mut w = 0.0;
        for (k, c) in rest.iter().enumerate() {
            w += advance(*c, face) * size;
            if w > max && k > 0 {
                break;
            }
            fit = k + 1;
        }
        while fit < rest.len() && is_combining(rest[fit]) {
            fit += 1;
        }
        let good = (0..fit.min(rest.len() - 1))
            .rev()
            .find(|&k| good_break(&rest, k));
        let any = rest[..fit]
            .iter()
            .rposition(|c| BREAKS.contains(c))
            .filter(|&k| k > 0 && k + 1 < rest.len());
        let at = good.or(any).map_or(fit, |k| k + 1);
        pieces.push(rest[..at].iter().collect());
        rest.drain(..at);
    }
    pieces.push(rest.into_iter().collect());
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mono_advance_is_the_faces_fixed_pitch() {
        // DejaVu Sans Mono: 1233 units of 2048 per character, bold alike.
        for c in ['m', 'i', 'W', '‖', 'Φ'] {
            assert!(
                (advance(c, Face::Mono) - 1233.0 / 2048.0).abs() < 1e-9,
                "{c}"
            );
            assert!(
                (advance(c, Face::MonoBold) - 1233.0 / 2048.0).abs() < 1e-9,
                "{c}"
            );
        }
        assert!((width("method", Face::Mono, 10.0) - 6.0 * 12330.0 / 2048.0).abs() < 1e-9);
    }

    #[test]
    fn sans_widths_differ_by_letter_and_weight() {
        assert!(width("iiii", Face::Sans, 10.0) < width("mmmm", Face::Sans, 10.0) / 2.0);
        assert!(width("method", Face::SansBold, 10.0) > width("method", Face::Sans, 10.0));
        let marked = width("q\u{307}", Face::Sans, 10.0) - width("q", Face::Sans, 10.0);
        assert!(marked.abs() < 1e-12);
    }

    #[test]
    fn wrap_fits_every_line_and_loses_nothing() {
        let text = "velocity-projection+projection on pendulum, implicit-euler-pendulum (3 pts)";
        for max in [40.0, 60.0, 90.0, 200.0] {
            let lines = wrap(text, Face::Sans, 7.0, max);
            for l in &lines {
                assert!(width(l, Face::Sans, 7.0) <= max, "{l:?} wider than {max}");
            }
            let joined: String = lines.concat().chars().filter(|c| *c != ' ').collect();
            assert_eq!(joined, text.replace(' ', ""), "{lines:?}");
        }
        // A long id breaks after its separators, not inside a word or a number.
        let lines = wrap("velocity-projection+projection", Face::Sans, 7.0, 80.0);
        assert_eq!(lines, vec!["velocity-projection+", "projection"]);
        assert_eq!(
            pieces("bdf+projection[order=4]"),
            vec!["bdf+", "projection[order=4]"]
        );
        assert_eq!(pieces("1.0e-3–1.0e-2"), vec!["1.0e-3–1.0e-2"]);
    }
}
