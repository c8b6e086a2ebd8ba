--
-- Is the skip threshold hook there?  Patched servers: yes, quietly.
-- Servers without the patch: no, and setting the threshold warns
-- (expected/hook_1.out).
--
SELECT vacskip.hook_active();
SET vacskip.threshold = 4;
SET vacskip.threshold = 32;
RESET vacskip.threshold;
