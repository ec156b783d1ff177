//! Attack 5a F2: any web page the person's browser loads ended their live `archgate ui --print`
//! code. Five hidden `<iframe src="http://127.0.0.1:PAGE/login?t=guess">` on a page of another
//! origin were served (a cross-site navigation of `/login` was let through for the login file's
//! forward, frames included), and every unknown token counted as a wrong guess: the fifth ended
//! the code the person was about to type. The browser runs as the person, so the peer-uid rule
//! does not see a stranger; the stranger is the web page.
//!
//! Class: *a guess counter any requester can feed*. Only a code typed into the page's own form
//! (a same-origin POST) is a guess; a link's token is 256 bits, redeems only links, and counts
//! for nothing; a frame's navigation from another site is refused outright.

use crate::support::*;

const PAGE: &str = "[approval]\npage = true\npage_port = 0\nnotifications = false\n";

fn code_of(env: &Env) -> String {
    let out = env.run(&["ui", "--print"]);
    let printed = stdout(&out);
    assert!(out.status.success(), "{printed}");
    printed
        .split("type the code ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .unwrap_or_else(|| panic!("no code: {printed}"))
        .to_owned()
}

/// A request as Chromium sends it for a navigation started by a page of another origin.
fn from_another_site<'a>(path: &'a str, dest: &'a str) -> Request<'a> {
    Request::get(path)
        .header("Sec-Fetch-Site", "cross-site")
        .header("Sec-Fetch-Mode", "navigate")
        .header("Sec-Fetch-Dest", dest)
}

#[test]
fn another_sites_frames_and_links_neither_guess_nor_end_the_persons_code() {
    let env = Env::with_config(PAGE);
    let _d = HttpServer::start(&env);
    let port = page_port(&env);
    let code = code_of(&env);

    // A frame on another site's page is refused before anything is looked at.
    for i in 0..10 {
        let path = format!("/login?t=guess{i}");
        let r = send(port, &from_another_site(&path, "iframe"));
        assert_eq!(r.status, 403, "a cross-site frame was served: {}", r.text());
    }
    // A top-level navigation from another site (what a login file's forward is) with a wrong
    // token is answered, and counts for nothing; nor does the code itself, sent as a link.
    for i in 0..10 {
        let path = format!("/login?t=guess{i}");
        let r = send(port, &from_another_site(&path, "document"));
        assert_eq!(r.status, 401, "{}", r.text());
    }
    let as_link = format!("/login?t={}", code.replace('-', ""));
    assert_eq!(
        send(port, &from_another_site(&as_link, "document")).status,
        401,
        "a short code is taken only from the page's own form"
    );

    // The person types their code: it still works, once.
    let post = |code: &str| {
        send(
            port,
            &Request::post("/login", format!("code={code}"))
                .header("Content-Type", "application/x-www-form-urlencoded"),
        )
    };
    let r = post(&code);
    assert_eq!(r.status, 303, "the person's code was ended: {}", r.text());
    assert_eq!(post(&code).status, 401, "a code works once");

    // Wrong codes typed into the form itself still end a live code (the guard the counter is).
    let code = code_of(&env);
    for _ in 0..5 {
        assert_eq!(post("AAAA-AAAA").status, 401);
    }
    assert_eq!(post(&code).status, 401, "five wrong typed codes end it");
}
