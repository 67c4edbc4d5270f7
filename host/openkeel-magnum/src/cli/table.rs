//! The boxed tables of cliff/prettytable, which Magnum's management
//! commands print.

use std::io::{self, Write};

/// Prints `rows` under `header` in cliff's table format.
pub fn print(out: &mut dyn Write, header: &[&str], rows: &[Vec<String>]) -> io::Result<()> {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let sep: String = widths.iter().fold("+".to_string(), |mut s, w| {
        s.push_str(&"-".repeat(w + 2));
        s.push('+');
        s
    });
    let line = |out: &mut dyn Write, cells: &mut dyn Iterator<Item = &str>| -> io::Result<()> {
        let mut s = String::from("|");
        for (c, w) in cells.zip(&widths) {
            s.push(' ');
            s.push_str(c);
            s.push_str(&" ".repeat(w - c.chars().count()));
            s.push_str(" |");
        }
        writeln!(out, "{s}")
    };
    writeln!(out, "{sep}")?;
    line(out, &mut header.iter().copied())?;
    writeln!(out, "{sep}")?;
    for r in rows {
        line(out, &mut r.iter().map(String::as_str))?;
    }
    writeln!(out, "{sep}")
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_table_as_cliff_prints_it() {
        let mut out = Vec::new();
        super::print(
            &mut out,
            &["Name", "OS"],
            &[vec!["fake".into(), "ubuntu".into()]],
        )
        .unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "+------+--------+\n| Name | OS     |\n+------+--------+\n| fake | ubuntu |\n+------+--------+\n"
        );
    }
}
