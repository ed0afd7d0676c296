//! Chinese on paper. The seeds the catalog cites are Chinese documents, and some
//! citations name a seed's section by its Chinese title. The embedded DejaVu faces have
//! no CJK glyphs and no CJK font is readable by the build without network (none ships in
//! a crate the workspace has, and a system font would make the PDF depend on the
//! machine), so on paper each such title is set in English translation, in quotes; the
//! HTML and Markdown reports keep the original (the book sets only paper text through
//! [`printable`]). A title outside the glossary is set as "[untranslated Chinese]" —
//! never dropped silently; the report's test and this module's name the titles in use.

/// Whether `c` is a CJK character (ideographs, radicals, CJK punctuation, fullwidth forms).
pub(crate) fn is_cjk(c: char) -> bool {
    matches!(c as u32, 0x2E80..=0x9FFF | 0xF900..=0xFAFF | 0xFF00..=0xFFEF)
}

/// Section titles of the seeds (and the phrases of them that citations quote), with
/// their English translation. Fullwidth punctuation is read as ASCII before lookup.
const GLOSSARY: &[(&str, &str)] = &[
    (
        "保持约束的离散计算",
        "discrete computation that keeps the constraints",
    ),
    ("分层控制架构", "hierarchical control architecture"),
    ("低层跟踪轨迹", "the low level tracks the trajectory"),
    ("处理约束违背", "handles constraint violation"),
    (
        "高层规划满足约束的轨迹",
        "the high level plans a trajectory that meets the constraints",
    ),
    ("动态约束松弛", "dynamic constraint relaxation"),
    (
        "根据策略性能动态调整约束",
        "constraints adjusted to the policy's performance",
    ),
    ("微分代数方程", "differential-algebraic equations"),
    (
        "状态演化与即时约束",
        "state evolution and instantaneous constraints",
    ),
    ("方法选择指南", "guide to choosing a method"),
    ("训练", "training"),
    ("复杂系统", "complex systems"),
    ("实时性要求", "real-time requirements"),
    ("高精度要求", "high-accuracy requirements"),
    ("显式欧拉积分", "explicit Euler integration"),
    (
        "根据约束类型选择处理方法",
        "choosing the treatment by constraint type",
    ),
    ("混合方法", "hybrid methods"),
    ("混合约束求解器", "hybrid constraint solver"),
    ("约束刚度的影响", "effect of constraint stiffness"),
    ("过硬约束", "over-stiff constraints"),
    ("过软约束", "over-soft constraints"),
    ("约束松弛调度", "constraint relaxation schedule"),
    ("罚函数方法", "penalty-function method"),
    ("罚函数", "penalty function"),
    ("速度级投影", "velocity-level projection"),
    ("自适应容差", "adaptive tolerance"),
    ("约束缩放", "constraint scaling"),
    ("质量加权投影", "mass-weighted projection"),
    ("线性化投影", "linearized projection"),
    ("耦合投影", "coupled projection"),
    ("舒尔补", "Schur complement"),
    ("投影顺序依赖", "dependence on the projection order"),
    ("投影顺序", "projection order"),
    ("投影方法", "projection methods"),
    ("过度迭代", "excessive iteration"),
    ("预热启动", "warm start"),
    (
        "基于约束的物理特性分组处理",
        "grouping by the constraints' physical nature",
    ),
    ("选择合适的坐标系", "choosing suitable coordinates"),
    ("最大坐标", "maximal coordinates"),
    ("约简坐标", "reduced coordinates"),
    ("关节约束", "joint constraints"),
    ("直接法", "direct method"),
    ("接触约束", "contact constraints"),
    ("求解器", "solver"),
    ("软约束", "soft constraints"),
    ("硬约束", "hard constraints"),
    ("控制约束", "control constraints"),
    ("并行化", "parallelization"),
    (
        "独立约束组并行求解",
        "independent constraint groups solved in parallel",
    ),
    ("无滑动约束", "no-slip constraint"),
    ("滑动条件", "slip condition"),
    ("空间机器人", "space robots"),
    ("角动量守恒", "conservation of angular momentum"),
    ("软体机器人", "soft robots"),
    ("连续体约束", "continuum constraints"),
    ("紧急恢复机制", "emergency recovery"),
    ("回滚", "rollback"),
    ("重置", "reset"),
    ("使用对角增益矩阵", "diagonal gain matrices"),
    (
        "检测并移除冗余约束",
        "detecting and removing redundant constraints",
    ),
    (
        "早期训练阶段放松约束",
        "relaxing the constraints early in training",
    ),
    ("约束感知的探索", "constraint-aware exploration"),
    ("通过内部运动改变姿态", "reorienting by internal motion"),
    ("猫的翻正反射", "the cat's righting reflex"),
    ("人不能侧向移动", "a car cannot move sideways"),
    (
        "必须通过操纵实现平行泊车",
        "parallel parking takes manoeuvres",
    ),
    ("系统来源", "sources in the system"),
    ("外部扰动", "external disturbances"),
    (
        "用户交互或碰撞引入的突变",
        "jumps from user interaction or collisions",
    ),
];

/// Fullwidth punctuation as its ASCII counterpart (with the space a Latin text wants).
fn ascii_punctuation(c: char) -> Option<&'static str> {
    Some(match c {
        '：' => ": ",
        '，' => ", ",
        '（' => " (",
        '）' => ")",
        '、' => ", ",
        '；' => "; ",
        '。' => ". ",
        _ => return None,
    })
}

/// The translation of a run of CJK characters: the glossary's entry, or the run split
/// into glossary entries (longest first, in order), or `None`.
fn translate(run: &str) -> Option<String> {
    if run.is_empty() {
        return Some(String::new());
    }
    let mut entries: Vec<&(&str, &str)> = GLOSSARY
        .iter()
        .filter(|(zh, _)| run.starts_with(zh))
        .collect();
    entries.sort_by_key(|(zh, _)| std::cmp::Reverse(zh.len()));
    entries.into_iter().find_map(|(zh, en)| {
        let rest = translate(&run[zh.len()..])?;
        Some(if rest.is_empty() {
            en.to_string()
        } else {
            format!("{en}, {rest}")
        })
    })
}

/// `s` as set on paper: each run of Chinese characters in English translation, in
/// quotes (“penalty-function method”), or "[untranslated Chinese]" when the glossary
/// lacks it. Text without CJK characters is returned as it is.
pub(crate) fn printable(s: &str) -> String {
    if !s.chars().any(is_cjk) {
        return s.to_string();
    }
    let mut plain = String::with_capacity(s.len());
    for c in s.chars() {
        match ascii_punctuation(c) {
            Some(p) => plain.push_str(p),
            None => plain.push(c),
        }
    }
    let mut out = String::with_capacity(plain.len());
    let mut run = String::new();
    let flush = |run: &mut String, out: &mut String| {
        if !run.is_empty() {
            // A translation stands apart from a Latin word it was written against (RL训练).
            if out.chars().last().is_some_and(char::is_alphanumeric) {
                out.push(' ');
            }
            match translate(run) {
                Some(en) => out.push_str(&format!("“{en}”")),
                None => out.push_str("[untranslated Chinese]"),
            }
            run.clear();
        }
    };
    for c in plain.chars() {
        if is_cjk(c) {
            run.push(c);
        } else {
            let after_run = !run.is_empty();
            flush(&mut run, &mut out);
            if after_run && c.is_alphanumeric() {
                out.push(' ');
            }
            out.push(c);
        }
    }
    flush(&mut run, &mut out);
    out.replace("( ", "(").replace("  ", " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_titles_are_set_in_translation() {
        assert_eq!(
            printable("seed 001 §3.5.2 (罚函数方法) and"),
            "seed 001 §3.5.2 (“penalty-function method”) and"
        );
        assert_eq!(
            printable("§3.1 (方法选择指南: RL训练)"),
            "§3.1 (“guide to choosing a method”: RL “training”)"
        );
        assert_eq!(
            printable("(分层控制架构: 低层跟踪轨迹，处理约束违背)"),
            "(“hierarchical control architecture”: “the low level tracks the trajectory”, “handles constraint violation”)"
        );
        assert_eq!(printable("no Chinese"), "no Chinese");
        assert_eq!(printable("(未知)"), "([untranslated Chinese])");
    }

    /// Every Chinese run the full-size report's catalog and claims cite (74 experiments,
    /// 2026-12-07) has a translation.
    #[test]
    fn every_title_in_use_is_in_the_glossary() {
        for title in [
            "保持约束的离散计算",
            "分层控制架构",
            "低层跟踪轨迹，处理约束违背",
            "动态约束松弛",
            "微分代数方程: 状态演化与即时约束",
            "方法选择指南: RL训练",
            "方法选择指南: 复杂系统",
            "方法选择指南: 实时性要求",
            "方法选择指南: 高精度要求",
            "显式欧拉积分",
            "根据约束类型选择处理方法",
            "混合方法",
            "混合约束求解器",
            "约束刚度的影响: 过硬约束 / 过软约束",
            "约束松弛调度",
            "罚函数方法",
            "过硬约束",
            "速度级投影",
        ] {
            let p = printable(title);
            assert!(
                !p.contains("untranslated") && !p.chars().any(is_cjk),
                "{title} → {p}"
            );
        }
    }
}
