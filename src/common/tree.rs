//! Spark's tree drawing: `+- ` before the last child, `:- ` before the others, and `:  ` or
//! three spaces carried down below them.

/// Draws a tree; `line` describes one node, `children` lists its children in order.
pub fn draw_tree<T: ?Sized>(root: &T, line: &dyn Fn(&T) -> String, children: &dyn Fn(&T) -> Vec<&T>) -> String {
    let mut out = String::new();
    draw(root, line, children, "", "", &mut out);
    out
}

fn draw<T: ?Sized>(node: &T, line: &dyn Fn(&T) -> String, children: &dyn Fn(&T) -> Vec<&T>, first: &str, rest: &str, out: &mut String) {
    let text = line(node);
    // A node's description may span lines (subquery blocks); later lines keep the indentation.
    for (i, l) in text.lines().enumerate() {
        out.push_str(if i == 0 { first } else { rest });
        out.push_str(l);
        out.push('\n');
    }
    let kids = children(node);
    let n = kids.len();
    for (i, c) in kids.into_iter().enumerate() {
        if i + 1 == n {
            draw(c, line, children, &format!("{rest}+- "), &format!("{rest}   "), out);
        } else {
            draw(c, line, children, &format!("{rest}:- "), &format!("{rest}:  "), out);
        }
    }
}

/// Spark's inner children (subquery plans) below a node's `line`, before its children: each
/// drawn tree one level in, `:  ` carried down when the node has children, `   ` when not.
pub fn with_inner_children(line: String, has_children: bool, inner: &[String]) -> String {
    let carry = if has_children { ":  " } else { "   " };
    let mut text = line;
    for (i, tree) in inner.iter().enumerate() {
        let (first, rest) = if i + 1 == inner.len() { ("+- ", "   ") } else { (":- ", ":  ") };
        for (j, l) in tree.lines().enumerate() {
            text.push_str(&format!("\n{carry}{}{l}", if j == 0 { first } else { rest }));
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    struct N(&'static str, Vec<N>);

    #[test]
    fn draws_like_spark() {
        let t = N("Join", vec![N("A", vec![N("A1", vec![])]), N("B", vec![N("B1", vec![])])]);
        let s = draw_tree(&t, &|n: &N| n.0.to_string(), &|n: &N| n.1.iter().collect());
        assert_eq!(s, "Join\n:- A\n:  +- A1\n+- B\n   +- B1\n");
    }

    #[test]
    fn inner_children_hang_before_the_children() {
        let text = with_inner_children("Filter".into(), true, &["S1\n+- A".into(), "S2".into()]);
        assert_eq!(text, "Filter\n:  :- S1\n:  :  +- A\n:  +- S2");
        assert_eq!(with_inner_children("Leaf".into(), false, &["S".into()]), "Leaf\n   +- S");
    }
}
