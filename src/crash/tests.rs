use super::*;

const ID: &str = "5387d7554e012f5614dc3d2892bebb0583f26316";

fn frame(line: &str) -> CrashFrame<'_> {
    match recognise(line.as_bytes()) {
        Some(Recognised::Frame(f)) => f,
        other => panic!("{line:?}: {other:?}"),
    }
}

#[test]
fn sanitizer_frames_and_summary() {
    let line = format!("    #0 0x7f6268b195a6  (/tmp/b/libasan_lib.so+0x25a6) (BuildId: {ID})");
    let f = frame(&line);
    assert_eq!(f.producer, Producer::Sanitizer);
    assert_eq!(
        (f.frame, f.addr, f.module, f.offset, f.build_id),
        (
            Some(0),
            Some(0x7f6268b195a6),
            &b"/tmp/b/libasan_lib.so"[..],
            0x25a6,
            Some(ID.as_bytes())
        )
    );
    assert_eq!(f.span, 4..line.len());
    assert_eq!(f.adjust, Adjust::AsPrinted);

    let line = format!("    #12 <null> <null> (tsan+0xe926e) (BuildId: {ID})\r");
    let f = frame(&line);
    assert_eq!(
        (f.frame, f.addr, f.module, f.offset),
        (Some(12), None, &b"tsan"[..], 0xe926e)
    );
    assert_eq!(f.span, 4..line.len() - 1);

    let line =
        format!("SUMMARY: ThreadSanitizer: data race (/tmp/b/tsan+0xe926e) (BuildId: {ID}) ");
    let f = frame(&line);
    assert_eq!(
        (f.frame, f.module, f.offset),
        (None, &b"/tmp/b/tsan"[..], 0xe926e)
    );
    assert_eq!(
        &line[f.span.clone()],
        format!("(/tmp/b/tsan+0xe926e) (BuildId: {ID})")
    );
}

#[test]
fn android_frames() {
    let line = format!(
        "01-01 00:00:00.000  1234  1234 F DEBUG   :       #00 pc 00000000000bdcec  /apex/com.android.runtime/lib64/bionic/libc.so (abort+164) (BuildId: {ID})"
    );
    let f = frame(&line);
    assert_eq!(f.producer, Producer::Android);
    assert_eq!(
        (f.frame, f.offset, f.module),
        (
            Some(0),
            0xbdcec,
            &b"/apex/com.android.runtime/lib64/bionic/libc.so"[..]
        )
    );
    assert_eq!(f.build_id, Some(ID.as_bytes()));
    let f = frame("      #01 pc 0001139a  /system/bin/app (std::f(int)+20)");
    assert_eq!((f.offset, f.build_id), (0x1139a, None));
    let line = format!(
        "      #02 pc 000000000004fdbc  /data/app/base.apk (offset 0x1000) (BuildId: {ID})"
    );
    let f = frame(&line);
    assert_eq!(f.module, b"/data/app/base.apk");
    let f = frame("      #03 pc 000000000004fdbc  /system/bin/app");
    assert_eq!(
        f.span.end,
        "      #03 pc 000000000004fdbc  /system/bin/app".len()
    );
}

#[test]
fn systemd_lines() {
    assert_eq!(
        recognise(format!("                Module /usr/bin/app with build-id {ID}").as_bytes()),
        Some(Recognised::ModuleBuildId {
            name: b"/usr/bin/app",
            build_id: ID.as_bytes()
        })
    );
    let f = frame("                #3  0x00005555555551a9 n/a (/usr/bin/app + 0x11a9)");
    assert_eq!(f.producer, Producer::Systemd);
    assert_eq!(
        (f.frame, f.addr, f.module, f.offset, f.adjust),
        (
            Some(3),
            Some(0x5555555551a9),
            &b"/usr/bin/app"[..],
            0x11a9,
            Adjust::ReturnAddress
        )
    );
    let f = frame("#0  0x00007f7bbd2a9e2c __pthread_kill_implementation (libc.so.6 + 0x8ee2c)");
    assert_eq!(f.adjust, Adjust::AsPrinted);
}

#[test]
fn llvm_frames() {
    let f = frame(" #0 0x00007f2b1c9d8a3e (/usr/lib/llvm-22/lib/libLLVM.so.22.1+0x4dd8a3e)");
    assert_eq!(f.producer, Producer::Llvm);
    assert_eq!(
        (f.addr, f.module, f.offset, f.adjust),
        (
            Some(0x7f2b1c9d8a3e),
            &b"/usr/lib/llvm-22/lib/libLLVM.so.22.1"[..],
            0x4dd8a3e,
            Adjust::ReturnAddress
        )
    );
}

#[test]
fn near_misses_are_not_frames() {
    let misses = [
        // Build ID of odd length, too short.
        format!("    #0 0x7f62  (/tmp/b/lib.so+0x25a6) (BuildId: {}1)", ID),
        "    #0 0x7f62  (/tmp/b/lib.so+0x25a6) (BuildId: 5387d755)".to_string(),
        // No offset.
        format!("    #0 0x7f62  (/tmp/b/lib.so) (BuildId: {ID})"),
        format!("    #0 0x7f62  (/tmp/b/lib.so+) (BuildId: {ID})"),
        // Extra text.
        format!("    #0 0x7f62  (/tmp/b/lib.so+0x25a6) (BuildId: {ID}) extra"),
        format!("    #0 0x7f62 in main (/tmp/b/lib.so+0x25a6) (BuildId: {ID})"),
        format!("x#0 0x7f62  (/tmp/b/lib.so+0x25a6) (BuildId: {ID})"),
        "    #0 0x7f62 (/tmp/b/lib.so+0x25a6) trailing".to_string(),
        "      #00 pc 4fdbc  /system/bin/app".to_string(),
        "      #00 pc 000000000004fdbc /system/bin/app".to_string(),
        "#3  0x5555555551a9 n/a (/usr/bin/app + 0x11a9)".to_string(),
        "#3  0x00005555555551a9 n/a (/usr/bin/app + 0x11a9) x".to_string(),
        "SUMMARY: AddressSanitizer: SEGV (/tmp/b/lib.so+0x25a6)".to_string(),
        "Module /usr/bin/app with build-id 3d5e0".to_string(),
        "# 0x7f62  (/tmp/b/lib.so+0x25a6)".to_string(),
    ];
    for m in &misses {
        assert_eq!(recognise(m.as_bytes()), None, "{m:?}");
    }
}

#[test]
fn candidates_are_lines_with_hash_or_build() {
    let text = b"plain\n  #0 x\nno\nwith build-id\nboth # uild\nend\n";
    let c = Candidates::default();
    let lines: Vec<&[u8]> = c.lines(text).map(|r| &text[r]).collect();
    assert_eq!(
        lines,
        [&b"  #0 x"[..], &b"with build-id"[..], &b"both # uild"[..]]
    );
}
