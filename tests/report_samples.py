"""Tracebacks pasted into public bug reports, kept as short excerpts with their source.

Each constant is text as a reporter pasted it (trimmed to a few frames; nothing added),
with the report's address above it. ``tests/test_report.py`` parses them.
"""

from __future__ import annotations

# https://github.com/skoczen/will/issues/396 (a chained Python traceback: frozen frames,
# site-packages, the error, then the traceback raised while handling it)
PYTHON_CHAINED = """\
Traceback (most recent call last):
  File "/usr/local/lib/python3.6/site-packages/will/main.py", line 918, in bootstrap_plugins
    plugin_modules[full_module_name] = imp.load_source(module_name, module_path)
  File "/usr/local/lib/python3.6/imp.py", line 172, in load_source
    module = _load(spec)
  File "<frozen importlib._bootstrap>", line 684, in _load
  File "<frozen importlib._bootstrap>", line 665, in _load_unlocked
  File "<frozen importlib._bootstrap_external>", line 678, in exec_module
  File "<frozen importlib._bootstrap>", line 219, in _call_with_frames_removed
  File "/plugins/orvibo_alert.py", line 5, in <module>
    from orvibo import Orvibo
ImportError: cannot import name 'Orvibo'

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "/run_will.py", line 6, in <module>
    bot.bootstrap()
  File "/usr/local/lib/python3.6/site-packages/will/decorators.py", line 13, in wrapped_f
    return f(*args, **kwargs)
"""

# https://github.com/the-tale/the-tale/issues/863 (blank lines between frames; the
# project's own frames under an absolute deployment path)
PYTHON_SPACED = """\
```
Traceback (most recent call last):

  File "/home/the-tale/env/lib/python2.7/site-packages/django/core/handlers/base.py", line 115, in get_response
    response = callback(request, *callback_args, **callback_kwargs)

  File "/home/the-tale/project/forum/views.py", line 285, in get_thread
    ThreadReadInfoPrototype.read_thread(self.thread, self.account)

  File "/home/the-tale/project/forum/prototypes.py", line 388, in read_thread
    return cls.create(thread, account)

  File "/home/the-tale/project/forum/prototypes.py", line 376, in create
    except cls._model_class.IntegrityError:

AttributeError: type object 'ThreadReadInfo' has no attribute 'IntegrityError'
```
"""

# https://github.com/abbasovalex/django-SplitJSONWidget-form/issues/12 (Django's debug
# page, "copy-and-paste view": the line number on the line under each frame)
PYTHON_DJANGO = """\
Traceback:
File "/usr/local/lib/python2.7/dist-packages/django/core/handlers/base.py" in get_response
  223.                 response = middleware_method(request, response)
File "/usr/local/lib/python2.7/dist-packages/django/middleware/clickjacking.py" in process_response
  31.         if response.get('X-Frame-Options', None) is not None:

Exception Type: AttributeError
"""

# https://github.com/rougeth/youshallnotpass/issues/3 (an error tracker's excerpt: the
# error first, hidden frames, then the traceback's last frame and the error again)
PYTHON_SENTRY = """\
```
AttributeError: 'Settings' object has no attribute 'getattr'
(8 additional frame(s) were not displayed)
...
  File "webapp/views.py", line 15, in repos
    return render(request, 'webapp/repos.html', {'repos': repos})

AttributeError: 'Settings' object has no attribute 'getattr'
```
"""

# https://github.com/lqzhgood/Shmily-Get-MobileQQ-Andriod/issues/13 (Node: the throw
# site, the error with its code, V8 frames, async frames, Windows paths)
NODE_WINDOWS = """\
```
node:internal/errors:490
    ErrorCaptureStackTrace(err);
    ^

TypeError [ERR_INVALID_ARG_TYPE]: The "path" argument must be of type string. Received undefined
    at new NodeError (node:internal/errors:399:5)
    at validateString (node:internal/validators:163:11)
    at Object.parse (node:path:913:5)
    at audio (D:\\Shmily\\Shmily-Get-MobileQQ-Andriod-main\\decode\\typeHandle\\audio.js:51:36)
    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)
    at async typeMap (D:\\Shmily\\Shmily-Get-MobileQQ-Andriod-main\\decode\\typeMap.js:101:30)
    at async ToMsg (D:\\Shmily\\Shmily-Get-MobileQQ-Andriod-main\\decode\\index.js:30:44)
    at async D:\\Shmily\\Shmily-Get-MobileQQ-Andriod-main\\index.js:37:20 {
  code: 'ERR_INVALID_ARG_TYPE'
}

Node.js v18.16.1
```
"""

# https://github.com/houshuang/roam-export/issues/2 (quoted with "> ", an ES module frame
# as a file:/// URL, older Node's bare core file names)
NODE_QUOTED_ESM = """\
command run:

> node index.mjs

Error received:

> internal/process/esm_loader.js:74
>     internalBinding('errors').triggerUncaughtException(
>                               ^
>
> TypeError [ERR_INVALID_ARG_TYPE]: The "path" argument must be of type string or an instance of Buffer or URL. Received undefined
>     at Object.openSync (fs.js:457:10)
>     at Object.readFileSync (fs.js:368:35)
>     at file:///home/caleb/roamexport/roam-export/index.mjs:78:17
>     at ModuleJob.run (internal/modules/esm/module_job.js:140:23)
>     at async Loader.import (internal/modules/esm/loader.js:162:24)
>     at async Object.loadESM (internal/process/esm_loader.js:68:5) {
>   code: 'ERR_INVALID_ARG_TYPE'
> }
"""

# https://github.com/spring-projects/spring-framework/issues/28258 (a Java trace: the
# exception with its message, then frames innermost first, then "...")
JAVA = """\
```
org.springframework.jdbc.CannotGetJdbcConnectionException: Failed to obtain JDBC Connection: Session/EntityManager is closed
    at org.springframework.jdbc.datasource.DataSourceUtils.getConnection(DataSourceUtils.java:86)
    at org.springframework.jdbc.core.JdbcTemplate.execute(JdbcTemplate.java:330)
    at org.springframework.boot.actuate.jdbc.DataSourceHealthIndicator.getProduct(DataSourceHealthIndicator.java:122)
    at org.springframework.boot.actuate.jdbc.DataSourceHealthIndicator.doDataSourceHealthCheck(DataSourceHealthIndicator.java:105)
    ...
```
"""

# https://github.com/mauricioaniche/ck/issues/10 (pasted with the first frame glued to
# the exception's name)
JAVA_GLUED = """\
\tException in thread "main" java.lang.NullPointerExceptionat com.github.mauricioaniche.ck.FileUtils.getAllDirs(FileUtils.java:23)
\tat com.github.mauricioaniche.ck.FileUtils.getAllDirs(FileUtils.java:11)
\tat com.github.mauricioaniche.ck.CK.calculate(CK.java:52)
\tat com.github.mauricioaniche.ck.Runner.main(Runner.java:18)
"""

# https://github.com/Kotlin/kotlin-interactive-shell/issues/24 (Kotlin on the JVM)
KOTLIN = """\
```
[3] null
Exception in thread "Thread-4" kotlin.KotlinNullPointerException
\tat com.github.khud.kshell.repl.ReplEvaluator.eval(ReplEvaluator.kt:37)
\tat com.github.khud.sparklin.kshell.KShell.compileAndEval(KShell.kt:235)
\tat com.github.khud.sparklin.kshell.KShell$eval$$inlined$apply$lambda$1.invoke(KShell.kt:214)
\tat com.github.khud.sparklin.kshell.KShell$EvalThread.run(KShell.kt:77)
Runtime Error: Interrupted
```
"""

# https://github.com/Jire/Charlatano/issues/314 (an issue title: a whole Kotlin trace on
# one line)
KOTLIN_TITLE = (
    'Exception in thread "main" java.lang.NullPointerException at '
    "com.charlatano.game.CSGO.initialize(CSGO.kt:86) at "
    "com.charlatano.Charlatano.main(Charlatano.kt:45)"
)

# https://github.com/k1LoW/tbls/pull/147 (a Go panic: the repository's frames under the
# author's GOPATH, a dependency under the module cache)
GO = """\
```
panic: assignment to entry in nil map

goroutine 1 [running]:
github.com/k1LoW/tbls/output/config.(*Config).OutputSchema(0xc0000d8860, 0x4bf39e0, 0xc0000d8868, 0xc0005b54a0, 0x0, 0x0)
        /Users/k1low/src/github.com/k1LoW/tbls/output/config/config.go:46 +0xbe7
github.com/k1LoW/tbls/cmd.glob..func4(0x5276e00, 0xc000049180, 0x0, 0x4)
        /Users/k1low/src/github.com/k1LoW/tbls/cmd/out.go:122 +0x22e
github.com/spf13/cobra.(*Command).execute(0x5276e00, 0xc000049140, 0x4, 0x4, 0x5276e00, 0xc000049140)
        /Users/k1low/go/pkg/mod/github.com/spf13/cobra@v0.0.5/command.go:830 +0x2aa
main.main()
        /Users/k1low/src/github.com/k1LoW/tbls/main.go:33 +0x20
make: *** [db/doc] Error 2
```
"""

# https://github.com/cmu440/intro-to-go/issues/1 (two goroutines, a "created by" frame)
GO_GOROUTINES = """\
panic: runtime error: invalid memory address or nil pointer dereference
[signal 0xb code=0x1 addr=0x1 pc=0x8048f30]

goroutine 1 [running]:
main.main()
        /home/simon/course/intro-to-go/12.go:25 +0x330

goroutine 6 [chan send]:
main.chanSender(0x18346040, 0x80f5f10, 0x3)
        /home/simon/course/intro-to-go/12.go:36 +0x1a4
created by main.main
        /home/simon/course/intro-to-go/12.go:20 +0x140
exit status 2
"""

# https://github.com/trueagi-io/hyperon-experimental/pull/1001 (a Rust backtrace: numbered
# frames, each with its "at" line; the repository's frames, then the toolchain's)
RUST_BACKTRACE = """\
```
                               at /home/daddywesker/SingularityNet/Metta/dw_fork/hyperon-experimental/repl/src/main.rs:161:17
  50:     0x56242eb9ca54 - metta_repl::main::h43152c69d2c3e3af
                               at /home/daddywesker/SingularityNet/Metta/dw_fork/hyperon-experimental/repl/src/main.rs:87:9
  51:     0x56242ebc5ebb - core::ops::function::FnOnce::call_once::hb978d575bae605fb
                               at /home/daddywesker/.rustup/toolchains/stable-x86_64-unknown-linux-gnu/lib/rustlib/src/rust/library/core/src/ops/function.rs:250:5
  52:     0x56242eb9579d - std::sys::backtrace::__rust_begin_short_backtrace::h476ed22c5ea1db6f
                               at /home/daddywesker/.rustup/toolchains/stable-x86_64-unknown-linux-gnu/lib/rustlib/src/rust/library/std/src/sys/backtrace.rs:152:18
```
"""

# https://github.com/machineonamission/uwd2/issues/12 (a Rust panic without a backtrace:
# the message on the line after the location, a Windows path)
RUST_PANIC = """\
thread 'main' panicked at src\\explorer_modinfo.rs:45:14:
called `Option::unwrap()` on a `None` value
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace
"""

# https://github.com/rubygems/bundler/issues/5574 (Ruby: innermost first, "from" lines)
RUBY = """\
```
/home/f/.rbenv/versions/2.4.1/lib/ruby/2.4.0/rubygems/core_ext/kernel_require.rb:55:in `require'
/home/f/appname/bin/spring:15:in `<top (required)>'
bin/rails:3:in `load'
bin/rails:3:in `<main>'
Bundler Error Backtrace:
        from /home/f/.rbenv/versions/2.4.1/lib/ruby/gems/2.4.0/gems/bundler-1.14.6/lib/bundler/runtime.rb:90:in `block (2 levels) in require'
        from /home/f/.rbenv/versions/2.4.1/lib/ruby/gems/2.4.0/gems/bundler-1.14.6/lib/bundler/runtime.rb:86:in `each'
        from /home/f/appname/config/application.rb:7:in `<top (required)>'
```
"""

# https://github.com/yasyf/vc/issues/204 (an error tracker's Ruby backtrace: placeholders
# for the root, method names without quotes)
RUBY_AIRBRAKE = """\
**Error type:** `NoMethodError`
**Error message:** `` undefined method `pos' for nil:NilClass ``

**Backtrace:**
```
[PROJECT_ROOT]/app/models/list.rb:11:in funnel
[PROJECT_ROOT]/app/jobs/card_monitor_job.rb:6:in block in perform
[PROJECT_ROOT]/app/models/team.rb:26:in block in for_each
[PROJECT_ROOT]/app/models/team.rb:26:in each
```
"""

# https://github.com/gsamokovarov/skiptrace/issues/5 (Ruby 2.5+: numbered "N: from" lines,
# outermost first)
RUBY_NUMBERED = """\
```
\t44: from /Users/afuno/.rbenv/versions/2.6.3/lib/ruby/gems/2.6.0/gems/bootsnap-1.4.4/lib/bootsnap/load_path_cache/core_ext/kernel_require.rb:22:in `require'
\t43: from /Users/afuno/apps/app1/config/environment.rb:7:in `<main>'
```
"""

# https://github.com/uncovery/uncovery_me/issues/320 (a PHP fatal error and its whole
# stack trace on one line)
PHP_ONE_LINE = (
    "Fatal error: Uncaught Error: Call to undefined function umc_get_uuid_level() in "
    "/home/minecraft/server/bin/includes/wordpress.inc.php:60 Stack trace: #0 "
    "/home/minecraft/server/bin/core_include.php(107): umc_wp_get_vars() #1 "
    "/home/minecraft/server/bin/index_wp.php(47): umc_set_environment() #2 "
    "/home/minecraft/public_html/wp-content/themes/twentyeleven-child/header.php(14): "
    "include_once('/home/minecraft...') #3 /home/minecraft/public_html/wp-includes/"
    "template.php(688): require_once('/home/minecraft...')"
)

# https://github.com/v2board/v2board/issues/903 (PHP: the application's frame among
# Laravel's under vendor/)
PHP = """\
#18 /var/www/cp.tmasha.com/app/Exceptions/Handler.php(42): Illuminate\\Foundation\\Exceptions\\Handler->report()
#19 /var/www/cp.tmasha.com/vendor/nunomaduro/collision/src/Adapters/Laravel/ExceptionHandler.php(57): App\\Exceptions\\Handler->report()
#20 /var/www/cp.tmasha.com/vendor/laravel/framework/src/Illuminate/Foundation/Console/Kernel.php(366): NunoMaduro\\Collision\\Adapters\\Laravel\\ExceptionHandler->report()
#21 /var/www/cp.tmasha.com/vendor/laravel/framework/src/Illuminate/Foundation/Console/Kernel.php(131): Illuminate\\Foundation\\Console\\Kernel->reportException()
#22 /var/www/cp.tmasha.com/artisan(37): Illuminate\\Foundation\\Console\\Kernel->handle()
#23 {main}
"""

# https://github.com/dotnet/cli/issues/1706 (C#: a frame with its source location)
CSHARP = """\
```
Unhandled Exception: System.Exception: can we see the source code line number?
   at ConsoleApplication.Program.Main(String[] args) in E:\\temp\\hello\\Program.cs:line 10
```
"""

# https://github.com/simplcommerce/SimplCommerce/issues/44 (C#: frames without locations,
# an async state machine, "End of stack trace from previous location")
CSHARP_ASYNC = """\
System.ArgumentNullException: Value cannot be null.
Parameter name: source
   at System.Linq.Enumerable.Where[TSource](IEnumerable`1 source, Func`2 predicate)
   at SimplCommerce.Module.Localization.EfStringLocalizer.GetString(String name)
   at SimplCommerce.Module.Localization.EfStringLocalizer.get_Item(String name)
   at Microsoft.AspNetCore.Mvc.Localization.HtmlLocalizer.get_Item(String name)
   at AspNetCore._Views_Shared__LoginPartial_cshtml.<ExecuteAsync>d__49.MoveNext() in /Views/Shared/_LoginPartial.cshtml:line 9
--- End of stack trace from previous location where exception was thrown ---
   at System.Runtime.CompilerServices.TaskAwaiter.ThrowForNonSuccess(Task task)
"""
