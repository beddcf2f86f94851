set trace-commands on
break inline.c:12
run
info args
info registers edi
x/i $pc
continue
info args
info registers edi
